import { ArgumentMetadata, Injectable, PipeTransform } from '@nestjs/common';
import { plainToInstance } from 'class-transformer';
import { getMetadataStorage, validate } from 'class-validator';
import { Clock } from '../clock/clock';
import { checkFieldRules, hasFieldRules } from './field-rules';
import { listLength, toPydanticErrors } from './pydantic-errors';
import { REQUEST_HEADERS } from './request-headers';
import { Location, RequestValidationException, ValidationErrorItem } from './validation-error-item';

const LOCATIONS: Partial<Record<ArgumentMetadata['type'], Location>> = {
  body: 'body',
  query: 'query',
  param: 'path',
};

/** Where a parameter is read: a `@RequestHeaders()` parameter is a custom one. */
function locationOf({ type, data }: ArgumentMetadata): Location | undefined {
  return type === 'custom' && data === REQUEST_HEADERS ? 'header' : LOCATIONS[type];
}

const PRIMITIVES = new Set<unknown>([String, Number, Boolean, Array, Object]);

/**
 * The fields a DTO declares (every one carries a class-validator decorator), its lists, and the
 * most items each list with a bound (`@ArrayMaxSize`) takes.
 */
interface DeclaredFields {
  all: ReadonlySet<string>;
  lists: ReadonlySet<string>;
  maxItems: ReadonlyMap<string, number>;
}

const declaredFields = new WeakMap<object, DeclaredFields>();

function fieldsOf(metatype: new () => object): DeclaredFields {
  let fields = declaredFields.get(metatype);
  if (!fields) {
    const metadata = getMetadataStorage().getTargetValidationMetadatas(metatype, '', true, false);
    fields = {
      all: new Set(metadata.map((entry) => entry.propertyName)),
      lists: new Set(
        metadata
          .filter((entry) => entry.name === 'isArray' || entry.each)
          .map((entry) => entry.propertyName),
      ),
      maxItems: new Map(
        metadata
          .filter((entry) => entry.name === 'arrayMaxSize' && !entry.each)
          .map((entry) => [entry.propertyName, Number(entry.constraints[0])]),
      ),
    };
    declaredFields.set(metatype, fields);
  }
  return fields;
}

/**
 * A query parameter given more than once (`?limit=2&limit=3`) counts by its last value, as in
 * FastAPI (Starlette keeps the last), unless its field is a list. Express hands over the values
 * as an array, which a scalar field would refuse with a message about the wrong thing.
 */
function lastOfRepeated(query: object, lists: ReadonlySet<string>): object {
  return Object.fromEntries(
    Object.entries(query).map(([name, value]: [string, unknown]) => [
      name,
      Array.isArray(value) && !lists.has(name) ? value.at(-1) : value,
    ]),
  );
}

/**
 * A list longer than its bound cut to one item past it, before the input is transformed and
 * validated: pydantic stops reading a list there (its error is `too_long` alone, its items
 * unread), and 200,000 names each transformed and checked held the event loop for seconds (an
 * audit's finding). Returns the input to validate and the length, as sent, of each list cut.
 * Only the DTO's own fields: none of the service's DTOs nests a bounded list in another DTO.
 */
function cutOverLongLists(
  input: object,
  maxItems: ReadonlyMap<string, number>,
): { input: object; sentLengths: ReadonlyMap<string, number> } {
  const sentLengths = new Map<string, number>();
  let cut: Record<string, unknown> | undefined;
  for (const [name, max] of maxItems) {
    const list: unknown = Object.hasOwn(input, name) && (input as Record<string, unknown>)[name];
    if (!Array.isArray(list) || list.length <= max) continue;
    sentLengths.set(name, list.length);
    // A copy: the request's body stays as it was sent.
    cut ??= { ...input };
    cut[name] = list.slice(0, max + 1);
  }
  return { input: cut ?? input, sentLengths };
}

/** A cut list's `too_long` error, told with the length the client sent, not the cut one. */
function withSentLengths(
  errors: ValidationErrorItem[],
  sentLengths: ReadonlyMap<string, number>,
  maxItems: ReadonlyMap<string, number>,
): ValidationErrorItem[] {
  return errors.map((error) => {
    const name = error.loc[1];
    const sent = typeof name === 'string' ? sentLengths.get(name) : undefined;
    if (sent === undefined || error.loc.length !== 2 || error.type !== 'too_long') return error;
    return { loc: error.loc, ...listLength('max', maxItems.get(name as string)!, sent) };
  });
}

/**
 * Validates DTO-typed bodies, queries, path parameters and headers (`@RequestHeaders()`) and
 * reports every failure at once as a FastAPI-style 422, the DTO's field rules (checks against now
 * or another field) included. Bodies forbid unknown fields (a typo is an error, as in the
 * original); query strings ignore unknown parameters and take a repeated one's last value, as
 * FastAPI does; headers ignore the ones the DTO does not name.
 */
@Injectable()
export class RequestValidationPipe implements PipeTransform {
  /** `clock`: the service's, the one its field rules read "now" on (field-rules.ts). */
  constructor(private readonly clock: Clock) {}

  async transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    const location = locationOf(metadata);
    const metatype = metadata.metatype;
    if (!location || !metatype || PRIMITIVES.has(metatype)) return value;

    if (location === 'body' && (value === undefined || value === null)) {
      throw new RequestValidationException([
        { loc: ['body'], msg: 'Field required', type: 'missing' },
      ]);
    }
    const notAnObject = new RequestValidationException([
      {
        loc: [location],
        msg: 'Input should be a valid dictionary or object to extract fields from',
        type: 'model_attributes_type',
      },
    ]);
    if (typeof value !== 'object' || value === null || Array.isArray(value)) throw notAnObject;

    const fields = fieldsOf(metatype as new () => object);
    const { input, sentLengths } = cutOverLongLists(
      location === 'query' ? lastOfRepeated(value, fields.lists) : value,
      fields.maxItems,
    );
    let instance: object;
    try {
      instance = plainToInstance(metatype as new () => object, input, {
        enableImplicitConversion: false,
      });
    } catch {
      // class-transformer takes a nested object's own `constructor` field for its class and
      // throws (`{"name": {"constructor": {}}}`, found by fuzzing): such input is never valid.
      throw notAnObject;
    }
    // Unknown body fields are found here, by own keys: class-validator's own check looks names
    // up in a plain object, so `toString` or `constructor` passed as known (found by an audit).
    const extras =
      location === 'body' ? Object.keys(value).filter((key) => !fields.all.has(key)) : [];
    const checks = await validate(instance, {
      whitelist: true,
      // Still on, for nested objects; the top level's extras are ours (below).
      forbidNonWhitelisted: location === 'body',
      forbidUnknownValues: false,
      validationError: { target: true, value: true },
    });
    const errors = withSentLengths(
      toPydanticErrors(checks, [location]),
      sentLengths,
      fields.maxItems,
    ).filter((error) => !(error.type === 'extra_forbidden' && error.loc.length === 2));
    // The rules needing the clock or another field, in the same 422 (field-rules.ts).
    if (hasFieldRules(metatype)) {
      const failed = new Set(errors.map((error) => error.loc[1]));
      errors.push(...checkFieldRules(metatype, instance, failed, location, this.clock.now()));
    }
    if (errors.length > 0 || extras.length > 0)
      throw new RequestValidationException([
        ...inDeclaredOrder(errors, fields.all),
        // After the declared fields' errors, as pydantic reports them.
        ...extras.map((key) => ({
          loc: [location, key],
          msg: 'Extra inputs are not permitted',
          type: 'extra_forbidden',
        })),
      ]);
    return instance;
  }
}

/**
 * Errors in the order the DTO declares its fields, the order of the documented schema and of
 * pydantic's list; a field's own items (a list's indexes) keep theirs. Sorted, stably, because
 * the field rules run after every decorator.
 */
function inDeclaredOrder(
  errors: ValidationErrorItem[],
  declared: ReadonlySet<string>,
): ValidationErrorItem[] {
  const names = [...declared];
  const rank = (error: ValidationErrorItem) => names.indexOf(String(error.loc[1]));
  return errors.sort((a, b) => rank(a) - rank(b));
}

import { ArgumentMetadata, Injectable, PipeTransform } from '@nestjs/common';
import { plainToInstance } from 'class-transformer';
import { defaultMetadataStorage } from 'class-transformer/cjs/storage';
import { getMetadataStorage, validate, ValidationTypes } from 'class-validator';
import { Clock } from '../clock/clock';
import { checkFieldRules, hasFieldRules } from './field-rules';
import { recordParameterValidation } from './parameter-validations';
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

type Dto = new () => object;

/**
 * The fields a DTO declares (every one carries a class-validator decorator), its lists, the
 * most items each list with a bound (`@ArrayMaxSize`) takes, and the DTO each nested field
 * (`@ValidateNested()` with class-transformer's `@Type`) holds.
 */
interface DeclaredFields {
  all: ReadonlySet<string>;
  lists: ReadonlySet<string>;
  maxItems: ReadonlyMap<string, number>;
  nested: ReadonlyMap<string, Dto>;
}

const declaredFields = new WeakMap<object, DeclaredFields>();

function fieldsOf(metatype: Dto): DeclaredFields {
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
      nested: new Map(
        metadata
          .filter((entry) => entry.type === ValidationTypes.NESTED_VALIDATION)
          .flatMap((entry) => {
            const type = defaultMetadataStorage.findTypeMetadata(metatype, entry.propertyName);
            return type ? [[entry.propertyName, type.typeFunction() as Dto] as const] : [];
          }),
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

type Loc = (string | number)[];

const isObject = (value: unknown): value is object => typeof value === 'object' && value !== null;

/**
 * A value class-transformer is not given: an object (or a list holding one) in a field that is
 * no nested DTO. class-transformer copies such a value key by key and takes its own
 * `constructor` field for its class, throwing on `{"name": {"constructor": {}}}` (found by
 * fuzzing); no DTO is built from it, and its field's checks refuse it by its type.
 */
const holdsObject = (value: unknown) =>
  isObject(value) && (!Array.isArray(value) || value.some(isObject));

/**
 * `value` as an instance of `metatype`, built from the fields it declares only, and nested DTOs
 * alike; the location of every other field of an object read is added to `extras`, when given.
 * class-transformer and class-validator's `whitelist` walked every field sent instead: a body of
 * 100,000 unknown fields held the event loop for ~12 s (a hostile-client review's finding).
 * Fields are found by own keys: `toString` or `__proto__` is no declared field.
 */
function instanceOf(metatype: Dto, value: object, loc: Loc, extras?: Loc[]): object {
  const fields = fieldsOf(metatype);
  if (extras)
    for (const key of Object.keys(value)) if (!fields.all.has(key)) extras.push([...loc, key]);
  const plain: Record<string, unknown> = {};
  const asSent = new Map<string, unknown>();
  for (const name of fields.all) {
    if (!Object.hasOwn(value, name)) continue;
    const field: unknown = (value as Record<string, unknown>)[name];
    const nested = fields.nested.get(name);
    if (nested) asSent.set(name, nestedInstances(nested, field, [...loc, name], extras));
    else if (holdsObject(field)) asSent.set(name, field);
    else plain[name] = field;
  }
  const instance = plainToInstance(metatype, plain, { enableImplicitConversion: false });
  return Object.assign(instance, Object.fromEntries(asSent));
}

/**
 * A nested field's object, or each object of its list, as `metatype`; anything else is left to
 * its checks (`model_type`).
 */
function nestedInstances(metatype: Dto, value: unknown, loc: Loc, extras?: Loc[]): unknown {
  const read = (item: unknown, at: Loc) =>
    isObject(item) && !Array.isArray(item) ? instanceOf(metatype, item, at, extras) : item;
  return Array.isArray(value)
    ? value.map((item, index) => read(item, [...loc, index]))
    : read(value, loc);
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

  transform(value: unknown, metadata: ArgumentMetadata): unknown {
    const location = locationOf(metadata);
    const metatype = metadata.metatype;
    if (!location || !metatype || PRIMITIVES.has(metatype)) return value;
    const validation = this.validate(value, location, metatype as Dto);
    // So that a refusal lists the other parameters' errors too (parameter-validations.ts).
    recordParameterValidation(validation);
    return validation;
  }

  private async validate(value: unknown, location: Location, metatype: Dto): Promise<object> {
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

    const fields = fieldsOf(metatype);
    const { input, sentLengths } = cutOverLongLists(
      location === 'query' ? lastOfRepeated(value, fields.lists) : value,
      fields.maxItems,
    );
    // Unknown fields are refused in bodies only: queries and headers ignore them.
    const extras: Loc[] | undefined = location === 'body' ? [] : undefined;
    const instance = instanceOf(metatype, input, [location], extras);
    const checks = await validate(instance, {
      forbidUnknownValues: false,
      validationError: { target: true, value: true },
    });
    const errors = withSentLengths(
      toPydanticErrors(checks, [location]),
      sentLengths,
      fields.maxItems,
    );
    // The rules needing the clock or another field, in the same 422 (field-rules.ts).
    if (hasFieldRules(metatype)) {
      const failed = new Set(errors.map((error) => error.loc[1]));
      errors.push(...checkFieldRules(metatype, instance, failed, location, this.clock.now()));
    }
    // As pydantic lists them: a nested object's unknown fields after its field's other errors,
    // the body's own after every declared field's.
    const unknown = (extras ?? []).map((loc) => ({
      loc,
      msg: 'Extra inputs are not permitted',
      type: 'extra_forbidden',
    }));
    const nestedUnknown = unknown.filter((error) => error.loc.length > 2);
    const ownUnknown = unknown.filter((error) => error.loc.length === 2);
    if (errors.length > 0 || unknown.length > 0)
      throw new RequestValidationException([
        ...inDeclaredOrder([...errors, ...nestedUnknown], fields.all),
        ...ownUnknown,
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

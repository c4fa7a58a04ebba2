import { getMetadataStorage, ValidationError } from 'class-validator';
import { STORABLE_TEXT_REFUSAL } from '../validation/storable-text';
import { ValidationErrorItem } from './validation-error-item';

type Describe = (
  constraint: never,
  value: unknown,
) => { type: string; msg: string; ctx?: Record<string, unknown> };

/**
 * What pydantic says of a value an `int` field cannot take depends on what the value is. A JSON
 * number too large for a double (`1e400`) is parsed as Infinity, by JSON.parse as by Python's
 * json: pydantic calls it `finite_number`, not a fraction it does not have.
 */
function notAnInteger(value: unknown) {
  if (typeof value === 'string')
    return {
      type: 'int_parsing',
      msg: 'Input should be a valid integer, unable to parse string as an integer',
    };
  if (typeof value === 'number' && !Number.isFinite(value))
    return { type: 'finite_number', msg: 'Input should be a finite number' };
  if (typeof value === 'number')
    return {
      type: 'int_from_float',
      msg: 'Input should be a valid integer, got a number with a fractional part',
    };
  return { type: 'int_type', msg: 'Input should be a valid integer' };
}

/**
 * What pydantic says of a value a `float` field cannot take: a string it cannot read as a
 * number is `float_parsing`, anything else not a number (`null`, `{}`, `[]`) `float_type`.
 */
export function notANumber(value: unknown) {
  if (typeof value === 'string')
    return {
      type: 'float_parsing',
      msg: 'Input should be a valid number, unable to parse string as a number',
    };
  return { type: 'float_type', msg: 'Input should be a valid number' };
}

/**
 * class-validator constraint name → pydantic v2 error type and message, so our 422 bodies read
 * exactly like the original FastAPI service's. Type checks come first: like pydantic, a field
 * whose type is wrong reports only that. Only the checks our DTOs use are here (a boolean, say,
 * is not: pydantic reads `"yes"` as true where `@IsBoolean` refuses it, so no message could
 * make the two agree).
 */
const TYPE_CHECKS: Record<string, Describe> = {
  isDefined: () => ({ type: 'missing', msg: 'Field required' }),
  isString: () => ({ type: 'string_type', msg: 'Input should be a valid string' }),
  isInt: (_, value) => notAnInteger(value),
  isNumber: (_, value) => notANumber(value),
  isArray: () => ({ type: 'list_type', msg: 'Input should be a valid list' }),
  nestedValidation: () => ({
    type: 'model_type',
    msg: 'Input should be a valid dictionary or object to extract fields from',
  }),
};

function stringTooShort(n: number) {
  return {
    type: 'string_too_short',
    msg: `String should have at least ${n} character${n === 1 ? '' : 's'}`,
    ctx: { min_length: n },
  };
}

const CONSTRAINTS: Record<string, Describe> = {
  max: (le: number) => ({
    type: 'less_than_equal',
    msg: `Input should be less than or equal to ${le}`,
    ctx: { le },
  }),
  min: (ge: number) => ({
    type: 'greater_than_equal',
    msg: `Input should be greater than or equal to ${ge}`,
    ctx: { ge },
  }),
  maxLength: (n: number) => ({
    type: 'string_too_long',
    msg: `String should have at most ${n} character${n === 1 ? '' : 's'}`,
    ctx: { max_length: n },
  }),
  minLength: (n: number) => stringTooShort(n),
  // Blank is empty once trimmed (common/validation/not-blank.ts).
  notBlank: () => stringTooShort(1),
  storableText: () => ({ ...STORABLE_TEXT_REFUSAL, ctx: { ...STORABLE_TEXT_REFUSAL.ctx } }),
  arrayMaxSize: (n: number, value) => listLength('max', n, lengthOf(value)),
  arrayMinSize: (n: number, value) => listLength('min', n, lengthOf(value)),
  isIn: (values: unknown[]) => enumError(values),
  isIso8601: () => ({
    type: 'datetime_from_date_parsing',
    msg: 'Input should be a valid datetime or date',
  }),
};

/** pydantic's words and context for a value that is none of `values`. */
export function enumError(values: readonly unknown[]) {
  const expected = values.map((v) => `'${String(v)}'`);
  const text =
    expected.length > 1 ? `${expected.slice(0, -1).join(', ')} or ${expected.at(-1)}` : expected[0];
  return { type: 'enum', msg: `Input should be ${text}`, ctx: { expected: text } };
}

const lengthOf = (value: unknown) => (Array.isArray(value) ? value.length : 0);

/** pydantic's words and context for a list's length, its actual length included. */
export function listLength(bound: 'min' | 'max', n: number, actual: number) {
  const [type, words] = bound === 'max' ? ['too_long', 'at most'] : ['too_short', 'at least'];
  return {
    type,
    msg: `List should have ${words} ${n} item${n === 1 ? '' : 's'} after validation, not ${actual}`,
    ctx: { field_type: 'List', [`${bound}_length`]: n, actual_length: actual },
  };
}

/** Flattens class-validator's error tree into one pydantic-style item per failing location. */
export function toPydanticErrors(
  errors: ValidationError[],
  root: (string | number)[],
): ValidationErrorItem[] {
  return errors.flatMap((error) => describeError(error, root));
}

function describeError(
  error: ValidationError,
  parentLoc: (string | number)[],
): ValidationErrorItem[] {
  const loc = [...parentLoc, locSegment(error.property)];
  const constraints = error.constraints ?? {};
  const names = Object.keys(constraints);
  const items: ValidationErrorItem[] = [];

  if (names.length > 0) {
    if (error.value === undefined) {
      items.push({ loc, ...TYPE_CHECKS.isDefined(undefined as never, undefined) });
    } else {
      items.push(...describeConstraints(error, loc, names));
    }
  }
  for (const child of error.children ?? []) items.push(...describeError(child, loc));
  return items;
}

function describeConstraints(
  error: ValidationError,
  loc: (string | number)[],
  names: string[],
): ValidationErrorItem[] {
  const rules = findMetadata(error);
  const ordered = [...names].sort((a, b) => rank(a) - rank(b));
  const whole = ordered.filter((name) => !(rules.get(name)?.each && Array.isArray(error.value)));
  // A wrong type is all pydantic reports about a field, and so is a list
  // too long (pydantic stops reading it there, dropping what its items' errors were).
  const alone =
    whole.length > 0 && rank(whole[0]) <= 0
      ? whole[0]
      : whole.find((name) => name === 'arrayMaxSize');
  if (alone) return [{ loc, ...describe(alone, rules.get(alone)?.constraints, error) }];
  // Else it stops at the field's first failing check (a lower bound, then an upper one, then
  // the pattern, then its own validators): one error for the field itself.
  const items: ValidationErrorItem[] = whole
    .slice(0, 1)
    .map((name) => ({ loc, ...describe(name, rules.get(name)?.constraints, error) }));
  // `each: true` rules are checked per element, so each error points at the element's index.
  const perElement = ordered.filter((name) => !whole.includes(name));
  if (perElement.length === 0) return items;
  (error.value as unknown[]).forEach((value, index) => {
    const failing = perElement.find((name) => !rules.get(name)!.validate(value));
    if (failing)
      items.push({
        loc: [...loc, index],
        ...describe(failing, rules.get(failing)?.constraints, error, value),
      });
  });
  return items;
}

function describe(
  name: string,
  constraints: unknown[] | undefined,
  error: ValidationError,
  value: unknown = error.value,
) {
  const known = TYPE_CHECKS[name] ?? CONSTRAINTS[name];
  if (known) return known(constraints?.[0] as never, value);
  // The service's own validators (an id's characters, a label's form…): a pydantic validator's
  // ValueError.
  const message = error.constraints?.[name] ?? 'invalid value';
  return { type: 'value_error', msg: `Value error, ${message}` };
}

/**
 * The order pydantic checks a field in: type, lower bounds (a text's after its
 * white space is stripped: `notBlank`), upper bounds, pattern, the field's own validators.
 */
function rank(name: string): number {
  // A list's own type before its items': `each: true` rules check a value that is no list as
  // one item, and `{"usernames": 5}` was told "a valid string" (an audit's finding).
  if (name === 'isArray') return -1;
  if (name in TYPE_CHECKS) return 0;
  if (LOWER_BOUNDS.has(name)) return 1;
  if (name === 'storableText') return 3;
  return name in CONSTRAINTS ? 2 : 4;
}

const LOWER_BOUNDS = new Set(['minLength', 'notBlank', 'arrayMinSize', 'min']);

interface RuleMetadata {
  each: boolean;
  constraints: unknown[];
  validate: (value: unknown) => boolean;
}

function findMetadata(error: ValidationError): Map<string, RuleMetadata> {
  const rules = new Map<string, RuleMetadata>();
  const target = error.target?.constructor;
  if (!target) return rules;
  const storage = getMetadataStorage();
  for (const meta of storage.getTargetValidationMetadatas(target, '', true, false)) {
    // Only constraint-backed rules (not @IsOptional, @ValidateNested, ...) can be re-run per
    // element.
    if (meta.propertyName !== error.property || typeof meta.constraintCls !== 'function') continue;
    const constraintName =
      meta.name ?? storage.getTargetValidatorConstraints(meta.constraintCls)[0]?.name;
    if (!constraintName) continue;
    const Constraint = meta.constraintCls as new () => {
      validate(value: unknown, args: object): boolean;
    };
    rules.set(constraintName, {
      each: meta.each,
      constraints: meta.constraints ?? [],
      validate: (value) =>
        new Constraint().validate(value, {
          constraints: meta.constraints,
          value,
          targetName: target.name,
          object: error.target ?? {},
          property: meta.propertyName,
        }),
    });
  }
  return rules;
}

function locSegment(property: string): string | number {
  return /^\d+$/.test(property) ? Number(property) : property;
}

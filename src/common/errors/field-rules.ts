import { Location, valueErrorItem, ValidationErrorItem } from './validation-error-item';

/**
 * A field's check that needs the request's instant (an expiry in the future) or another field's
 * value (a start not after the end): the class-validator decorators see neither. It runs in the
 * same validation pass as the decorators (RequestValidationPipe), after them, so that its 422
 * lists it with every other failing field (docs/decisions.md, "Errors"); run by the service, it
 * was a second 422 once the client had fixed the first.
 */
export interface FieldRule<T extends object> {
  /** Where a refusal is reported: the field the rule checks. */
  field: keyof T & string;
  /**
   * The other fields it reads. It runs only once they and `field` passed their own checks: a
   * start cannot be compared with an end that is no date, and the end's own error says why.
   */
  reads?: (keyof T & string)[];
  /**
   * Why `dto` is refused, or undefined. `now` is the request's one instant on the service's
   * clock. `msg` is said as its `type` says it: a `value_error`'s gets pydantic's prefix.
   */
  refuse(dto: T, now: Date): { msg: string; type?: string } | undefined;
}

const rulesOf = new WeakMap<object, FieldRule<object>[]>();

/** Declares a DTO's field rules, checked by RequestValidationPipe with its other checks. */
export function FieldRules<T extends object>(...rules: FieldRule<T>[]) {
  return (target: new () => T): void => {
    rulesOf.set(target, rules as unknown as FieldRule<object>[]);
  };
}

/** Whether the DTO has rules, so that the clock is read only for those that do. */
export function hasFieldRules(metatype: object): boolean {
  return rulesOf.has(metatype);
}

/**
 * The refusals of `metatype`'s rules whose fields passed their own checks (`failed` names those
 * that did not), at `location`.
 */
export function checkFieldRules(
  metatype: object,
  dto: object,
  failed: ReadonlySet<string | number>,
  location: Location,
  now: Date,
): ValidationErrorItem[] {
  return (rulesOf.get(metatype) ?? []).flatMap((rule) => {
    if ([rule.field, ...(rule.reads ?? [])].some((name) => failed.has(name))) return [];
    const refusal = rule.refuse(dto, now);
    return refusal ? [valueErrorItem([location, rule.field], refusal.msg, refusal.type)] : [];
  });
}

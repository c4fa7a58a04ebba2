import { HttpException, HttpStatus } from '@nestjs/common';

export type Location = 'body' | 'query' | 'path' | 'header';

/** One failing field, in FastAPI / pydantic v2 form. */
export interface ValidationErrorItem {
  loc: (string | number)[];
  msg: string;
  type: string;
  ctx?: Record<string, unknown>;
}

/** The unknown fields one 422 lists at most; the others are counted in one item after them. */
export const MAX_LISTED_UNKNOWN_FIELDS = 20;

/**
 * A 422 carrying every failing field of a request at once, its unknown fields but the first
 * MAX_LISTED_UNKNOWN_FIELDS only counted: a body of 100,000 was answered with 100,000 items (a
 * hostile-client review's finding). Each item's keys come in one order,
 * `loc, msg, type, ctx`, as the README and the original's (FastAPI's) bodies write them, and as
 * a malformed body's 422 (body-parser-errors.ts) has them: the checks of the DTOs built theirs
 * `loc, type, msg, ctx`, a service's own rule (`start_date` after `end_date`) `loc, msg, type`,
 * so one endpoint's 422s listed the same fields in two orders.
 */
export class RequestValidationException extends HttpException {
  readonly errors: ValidationErrorItem[];

  constructor(errors: ValidationErrorItem[]) {
    const ordered = withUnknownFieldsCapped(errors).map(inKeyOrder);
    super({ detail: ordered }, HttpStatus.UNPROCESSABLE_ENTITY);
    this.errors = ordered;
  }
}

/**
 * An unknown field's item: at the field's location, not the count of the unlisted ones (at the
 * location alone), so that items already capped are left as they are when one 422 joins them
 * with another location's (parameter-validations.ts).
 */
const isUnknownField = (error: ValidationErrorItem) =>
  error.type === 'extra_forbidden' && error.loc.length > 1;

/**
 * The items with the unknown fields (`extra_forbidden`) past the first MAX_LISTED_UNKNOWN_FIELDS
 * left out, and one item at the end counting them, at the location of the unknown fields.
 */
function withUnknownFieldsCapped(errors: ValidationErrorItem[]): ValidationErrorItem[] {
  const unknown = errors.filter(isUnknownField);
  const unlisted = unknown.length - MAX_LISTED_UNKNOWN_FIELDS;
  if (unlisted <= 0) return errors;
  const listed = new Set(unknown.slice(0, MAX_LISTED_UNKNOWN_FIELDS));
  const fields = `field${unlisted === 1 ? '' : 's'}`;
  return [
    ...errors.filter((error) => !isUnknownField(error) || listed.has(error)),
    {
      loc: [unknown[0].loc[0]],
      msg: `Extra inputs are not permitted: ${unlisted} more unknown ${fields}, not listed`,
      type: 'extra_forbidden',
    },
  ];
}

function inKeyOrder({ loc, msg, type, ctx }: ValidationErrorItem): ValidationErrorItem {
  const named = { loc: loc.map(wellFormed), msg: msg.toWellFormed(), type };
  return ctx === undefined ? named : { ...named, ctx };
}

/**
 * A location's part, a client's field name among them, with U+FFFD for half a surrogate pair (a
 * JSON body may escape one, `"\ud800"`): written back as it came, it made the 422 that named it
 * one that strict JSON parsers (Rust's serde_json, Go's) refuse whole (a Unicode audit).
 */
function wellFormed(part: string | number): string | number {
  return typeof part === 'string' ? part.toWellFormed() : part;
}

/** One refusal in pydantic's words: a `value_error`'s message gets its `Value error, ` prefix. */
export function valueErrorItem(
  loc: (string | number)[],
  msg: string,
  type = 'value_error',
): ValidationErrorItem {
  return { loc, msg: type === 'value_error' ? `Value error, ${msg}` : msg, type };
}

/** For rules checked in services (a PATCH with no field): still a 422 in the same shape. */
export function validationError(
  loc: (string | number)[],
  msg: string,
  type = 'value_error',
): RequestValidationException {
  return new RequestValidationException([valueErrorItem(loc, msg, type)]);
}

import { HttpException, HttpStatus } from '@nestjs/common';

export type Location = 'body' | 'query' | 'path' | 'header';

/** One failing field, in FastAPI / pydantic v2 form. */
export interface ValidationErrorItem {
  loc: (string | number)[];
  msg: string;
  type: string;
  ctx?: Record<string, unknown>;
}

/**
 * A 422 carrying every failing field of a request at once. Each item's keys come in one order,
 * `loc, msg, type, ctx`, as the README and the original's (FastAPI's) bodies write them, and as
 * a malformed body's 422 (body-parser-errors.ts) has them: the checks of the DTOs built theirs
 * `loc, type, msg, ctx`, a service's own rule (`start_date` after `end_date`) `loc, msg, type`,
 * so one endpoint's 422s listed the same fields in two orders.
 */
export class RequestValidationException extends HttpException {
  readonly errors: ValidationErrorItem[];

  constructor(errors: ValidationErrorItem[]) {
    const ordered = errors.map(inKeyOrder);
    super({ detail: ordered }, HttpStatus.UNPROCESSABLE_ENTITY);
    this.errors = ordered;
  }
}

function inKeyOrder({ loc, msg, type, ctx }: ValidationErrorItem): ValidationErrorItem {
  return ctx === undefined ? { loc, msg, type } : { loc, msg, type, ctx };
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

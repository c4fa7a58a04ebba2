import { HttpException, HttpStatus } from '@nestjs/common';

export type Location = 'body' | 'query' | 'path' | 'header';

/** One failing field, in FastAPI / pydantic v2 form. */
export interface ValidationErrorItem {
  loc: (string | number)[];
  msg: string;
  type: string;
  ctx?: Record<string, unknown>;
}

/** A 422 carrying every failing field of a request at once. */
export class RequestValidationException extends HttpException {
  constructor(readonly errors: ValidationErrorItem[]) {
    super({ detail: errors }, HttpStatus.UNPROCESSABLE_ENTITY);
  }
}

/** For rules checked in services (e.g. start after end): still a 422 in the same shape. */
export function validationError(
  loc: (string | number)[],
  msg: string,
  type = 'value_error',
): RequestValidationException {
  return new RequestValidationException([
    { loc, msg: type === 'value_error' ? `Value error, ${msg}` : msg, type },
  ]);
}

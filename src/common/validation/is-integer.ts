import { applyDecorators } from '@nestjs/common';
import { Transform } from 'class-transformer';
import { IsInt } from 'class-validator';

/** Decimal digits with an optional minus sign: the one way an integer is written in a string. */
const DECIMAL_INTEGER = /^-?\d+$/;

/**
 * A string of decimal digits as its integer; anything else as it came, for IsInt to refuse.
 * (`Number()` would also read `0x10`, `1e2`, `+5` and ` 5`, and the empty string as 0.)
 */
export function decimalInteger(value: unknown): unknown {
  if (typeof value !== 'string' || !DECIMAL_INTEGER.test(value)) return value;
  const number = Number(value);
  // Beyond 2^53 the digits no longer name one number. `+ 0` turns `-0` into 0.
  return Number.isSafeInteger(number) ? number + 0 : value;
}

/**
 * An integer field, in a query string or a JSON body: a JSON number without a fraction, or a
 * string of decimal digits as above (pydantic's lax mode also reads `"5"` in a body as 5).
 * Refusals are pydantic's (pydantic-errors.ts): a string that is not such digits is
 * `int_parsing`, a number with a fraction `int_from_float`, an infinite one (JSON's `1e400`)
 * `finite_number`, anything else `int_type`.
 * Bounds are the field's own @Min/@Max.
 */
export const IsInteger = () =>
  applyDecorators(
    Transform(({ value }: { value: unknown }) => decimalInteger(value)),
    IsInt(),
  );

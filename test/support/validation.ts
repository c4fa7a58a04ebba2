import { ArgumentMetadata } from '@nestjs/common';
import { Clock } from '../../src/common/clock/clock';
import { REQUEST_HEADERS } from '../../src/common/errors/request-headers';
import { RequestValidationPipe } from '../../src/common/errors/request-validation.pipe';
import {
  RequestValidationException,
  ValidationErrorItem,
} from '../../src/common/errors/validation-error-item';

/**
 * What RequestValidationPipe makes of `input` read as `metatype`: the DTO it passes on, or
 * the 422 items it refuses it with. `header`: a `@RequestHeaders()` parameter. Its field rules
 * read `now` as the instant, the machine's time when none is given.
 */
export async function validated<T extends object>(
  metatype: new () => T,
  input: unknown,
  type: ArgumentMetadata['type'] | 'header',
  now?: Date,
): Promise<T | ValidationErrorItem[]> {
  const clock = now ? ({ now: () => now } as Clock) : new Clock();
  const metadata: ArgumentMetadata =
    type === 'header' ? { type: 'custom', data: REQUEST_HEADERS, metatype } : { type, metatype };
  try {
    return (await new RequestValidationPipe(clock).transform(input, metadata)) as T;
  } catch (error) {
    if (error instanceof RequestValidationException) return error.errors;
    throw error;
  }
}

/**
 * The 422 items RequestValidationPipe lists for `input` read as `metatype` (none when it passes).
 */
export async function validationErrors(
  metatype: new () => object,
  input: unknown,
  type: ArgumentMetadata['type'] | 'header',
  now?: Date,
): Promise<ValidationErrorItem[]> {
  const result = await validated(metatype, input, type, now);
  // A DTO the pipe passes on is never an array: it refuses an array for a DTO.
  return Array.isArray(result) ? (result as ValidationErrorItem[]) : [];
}

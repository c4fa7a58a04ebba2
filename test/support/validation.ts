import { ArgumentMetadata } from '@nestjs/common';
import { Clock } from '../../src/common/clock/clock';
import { RequestValidationPipe } from '../../src/common/errors/request-validation.pipe';
import {
  RequestValidationException,
  ValidationErrorItem,
} from '../../src/common/errors/validation-error-item';

/**
 * The 422 items RequestValidationPipe lists for `input` read as `metatype` (none when it
 * passes), its field rules reading `now` as the instant.
 */
export async function validationErrors(
  metatype: new () => object,
  input: object,
  type: ArgumentMetadata['type'],
  now: Date,
): Promise<ValidationErrorItem[]> {
  try {
    await new RequestValidationPipe({ now: () => now } as Clock).transform(input, {
      type,
      metatype,
    });
    return [];
  } catch (error) {
    if (error instanceof RequestValidationException) return error.errors;
    throw error;
  }
}

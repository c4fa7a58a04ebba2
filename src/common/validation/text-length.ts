import { ValidateBy, ValidationOptions } from 'class-validator';
import { characterCount } from '../characters';

/**
 * At most `max` characters (code points). Reported as pydantic's `string_too_long` (the
 * constraint keeps class-validator's name, `maxLength`, which pydantic-errors.ts maps).
 */
export const MaxCharacters = (max: number, options?: ValidationOptions) =>
  ValidateBy(
    {
      name: 'maxLength',
      constraints: [max],
      validator: {
        validate: (value: unknown) => typeof value === 'string' && characterCount(value) <= max,
        defaultMessage: () => `must be at most ${max} characters`,
      },
    },
    options,
  );

/** At least `min` characters (code points); pydantic's `string_too_short`. */
export const MinCharacters = (min: number, options?: ValidationOptions) =>
  ValidateBy(
    {
      name: 'minLength',
      constraints: [min],
      validator: {
        validate: (value: unknown) => typeof value === 'string' && characterCount(value) >= min,
        defaultMessage: () => `must be at least ${min} characters`,
      },
    },
    options,
  );

import { ValidateBy, ValidationOptions } from 'class-validator';
import { characterCount, composed } from '../characters';

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

/**
 * At most `max` characters (code points) once composed (NFC): for a text read as a word
 * (`composed`), whose two spellings (`café` with a combining accent or without) are one word and
 * must meet one bound, as a job label's does (docs/decisions.md, "Composed text").
 */
export const MaxComposedCharacters = (max: number, options?: ValidationOptions) =>
  ValidateBy(
    {
      name: 'maxLength',
      constraints: [max],
      validator: {
        validate: (value: unknown) =>
          typeof value === 'string' && characterCount(composed(value)) <= max,
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

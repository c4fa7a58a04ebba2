import { ValidateBy, ValidationOptions } from 'class-validator';
import { characterCount, composed } from '../characters';

/**
 * At most `max` characters (code points), as `count` counts them. Reported as pydantic's
 * `string_too_long` (the constraint keeps class-validator's name, `maxLength`, which
 * pydantic-errors.ts maps).
 */
const atMost = (count: (text: string) => number) => (max: number, options?: ValidationOptions) =>
  ValidateBy(
    {
      name: 'maxLength',
      constraints: [max],
      validator: {
        validate: (value: unknown) => typeof value === 'string' && count(value) <= max,
        defaultMessage: () => `must be at most ${max} characters`,
      },
    },
    options,
  );

/** At most `max` characters (code points), as sent. */
export const MaxCharacters = atMost(characterCount);

/**
 * At most `max` characters (code points) once composed (NFC): for a text read as a word
 * (`composed`), whose two spellings (`café` with a combining accent or without) are one word and
 * must meet one bound, as a job label's does (docs/decisions.md, "Composed text").
 */
export const MaxComposedCharacters = atMost((text) => characterCount(composed(text)));

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

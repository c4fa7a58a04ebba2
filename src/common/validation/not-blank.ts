import { ValidateBy, ValidationOptions } from 'class-validator';

/**
 * A string holding at least one character that is not white space: for fields trimmed before
 * use, where a blank value means the same as an empty one. Reported as the empty one is, a 422
 * `string_too_short` with `min_length` 1 (pydantic's `min_length` after `str_strip_whitespace`).
 */
export const NotBlank = (options?: ValidationOptions) =>
  ValidateBy(
    {
      name: 'notBlank',
      validator: {
        validate: (value: unknown) => typeof value === 'string' && value.trim() !== '',
        defaultMessage: () => 'must hold a character other than white space',
      },
    },
    options,
  );

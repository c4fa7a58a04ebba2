import { Matches } from 'class-validator';

/**
 * Postgres text cannot hold U+0000, so a string with one fails at the database as a 500.
 * Refuse it up front as a 422 `string_pattern_mismatch` on the field instead.
 */
export const NoNulCharacter = () =>
  Matches(/^[^\u0000]*$/, {
    message: 'must not contain the NUL character (U+0000)',
    context: { type: 'string_pattern_mismatch' },
  });

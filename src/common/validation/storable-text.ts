import { ValidateBy, ValidationOptions } from 'class-validator';

/**
 * True when Postgres can store the text as it is: no U+0000 (text and jsonb refuse it) and no
 * unpaired UTF-16 surrogate (the driver's UTF-8 encoder writes U+FFFD for one, so what was
 * stored differs from what was sent; jsonb refuses it). docs/decisions.md, "Text Postgres
 * cannot store".
 */
export function isStorableText(text: string): boolean {
  return !text.includes('\u0000') && text.isWellFormed();
}

/**
 * The text as Postgres can store it: U+0000 dropped, each unpaired surrogate replaced by U+FFFD
 * (what a UTF-8 decoder does with one). For text the gateway keeps rather than refuses: items
 * from miners, and reasons it writes that quote what others wrote.
 */
export function storableText(text: string): string {
  if (isStorableText(text)) return text;
  return text.replaceAll('\u0000', '').toWellFormed();
}

/**
 * The same rule as a pattern, read alike by Python's `re` and by a JavaScript RegExp with the
 * `u` flag: any code point but U+0000 and the surrogates (a surrogate pair is one code point
 * beyond U+FFFF in both, so only an unpaired one is refused).
 */
export const STORABLE_TEXT_PATTERN = '^[^\\x00\\ud800-\\udfff]*$';

/**
 * How a client's text Postgres cannot store is refused, wherever it comes: a 422 with
 * pydantic's `string_pattern_mismatch`, worded as pydantic words it.
 */
export const STORABLE_TEXT_REFUSAL = {
  type: 'string_pattern_mismatch',
  msg: `String should match pattern '${STORABLE_TEXT_PATTERN}'`,
  ctx: { pattern: STORABLE_TEXT_PATTERN },
} as const;

/**
 * A string Postgres can store as it is (isStorableText). A string with U+0000 was a 500 at the
 * insert (found by fuzzing); one with an unpaired surrogate was answered as sent and stored
 * with U+FFFD in its place (found by an audit). Reported as STORABLE_TEXT_REFUSAL
 * (pydantic-errors.ts).
 */
export const StorableText = (options?: ValidationOptions) =>
  ValidateBy(
    {
      name: 'storableText',
      validator: {
        validate: (value: unknown) => typeof value === 'string' && isStorableText(value),
        defaultMessage: () => STORABLE_TEXT_REFUSAL.msg,
      },
    },
    options,
  );

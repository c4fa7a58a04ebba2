/**
 * A decimal number in JSON's notation but for leading zeros, which `is-integer.ts`'s digits
 * allow too (`"05"`): an optional minus sign, digits, then an optional fraction and exponent.
 * (`Number()` would also read `0x10`, `+5`, ` 5`, `.5`,
 * `Infinity`, and the empty string as 0; pydantic reads some of them, but a number in a string
 * means here what the same characters mean outside one.)
 */
const DECIMAL_NUMBER = /^-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?$/;

/**
 * A string holding a decimal number as that number (pydantic's lax mode reads `"0.5"` for a
 * float as 0.5, as integers are read here: docs/decisions.md, "Errors"); anything else as it
 * came, for the field's check to refuse. Past any double (`"1e400"`) is Infinity, as JSON's
 * `1e400` is.
 */
export function decimalNumber(value: unknown): unknown {
  if (typeof value !== 'string' || !DECIMAL_NUMBER.test(value)) return value;
  // `+ 0` turns `-0` into 0, as decimalInteger does.
  return Number(value) + 0;
}

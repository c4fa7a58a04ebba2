/**
 * The length of a text in characters as pydantic and Postgres' `varchar(n)` count them: code
 * points. `length` counts UTF-16 units (an emoji is two), and class-validator's MaxLength
 * (validator.js `isLength`) leaves out variation selectors (U+FE0E, U+FE0F), so a name it let
 * through was too long for its column: a 500 at the insert (found by an audit).
 */
export function characterCount(text: string): number {
  let count = 0;
  // The string iterator steps by code point (an unpaired surrogate is one step).
  for (const _ of text) count += 1;
  return count;
}

/**
 * The text's first `max` characters (code points): a cut by UTF-16 units could end in half a
 * surrogate pair, which strict JSON parsers refuse, and keeps fewer characters than counted.
 */
export function firstCharacters(text: string, max: number): string {
  // At most `max` units is at most `max` code points: the common case needs no walk.
  if (text.length <= max) return text;
  let cut = '';
  let count = 0;
  for (const character of text) {
    if (count++ === max) break;
    cut += character;
  }
  return cut;
}

/**
 * The text in its composed form (NFC), the form posts and X's hashtags are written in: `café`
 * typed with a combining accent (NFD, as some keyboards and copy-pastes give it) is the same
 * word, and must name the same label, task and matches (a Unicode audit's finding: it made a
 * second task of one label and matched nothing).
 */
export function composed(text: string): string {
  return text.normalize('NFC');
}

/**
 * The text lower-cased, composed: the form words are compared in. Composed after lower-casing,
 * since lower-casing can decompose: a few capitals have no composed form but their lower-case
 * letter has (`J̌` lower-cases to `j` + U+030C, which is `ǰ` composed; also `Ϊ́`, `Ϋ́`, `H̱`,
 * `T̈`, `W̊`, `Y̊`), and lower-cased after composing, `#J̌` and `#ǰ` were two jobs' labels, and
 * the keyword `J̌` matched no post writing `ǰ` (a property-based audit).
 */
export function composedLowerCase(text: string): string {
  return text.toLowerCase().normalize('NFC');
}

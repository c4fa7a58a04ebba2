const WHITE_SPACE = /^\p{White_Space}$/u;

/**
 * The text without the Unicode White_Space characters around it, as pydantic's
 * `str_strip_whitespace` trims (Rust's `str::trim`): U+0085 is white space, U+FEFF is not,
 * where JavaScript's `trim()` holds the opposite. Walks in from both ends, so a long run of
 * white space inside the text costs nothing (a regex anchored at the end backtracks over every
 * inner run: quadratic, seconds for a body of 100,000 spaces).
 */
export function trimWhiteSpace(text: string): string {
  let start = 0;
  let end = text.length;
  while (start < end && WHITE_SPACE.test(text[start])) start += 1;
  while (end > start && WHITE_SPACE.test(text[end - 1])) end -= 1;
  return text.slice(start, end);
}

/**
 * A pattern matching a text holding a character outside White_Space, the characters spelled
 * out, so that it reads alike in ECMA-262 (with or without the Unicode flag), Python's `re`,
 * Java and Rust, whose `\s` each mean something else.
 */
export const NOT_ONLY_WHITE_SPACE_PATTERN =
  '[^\\t-\\r \\u0085\\u00A0\\u1680\\u2000-\\u200A\\u2028\\u2029\\u202F\\u205F\\u3000]';

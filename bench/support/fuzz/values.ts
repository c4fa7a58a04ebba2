import fc from 'fast-check';

/**
 * JSON text that JSON.stringify cannot produce (`1e400`, `-0`, duplicate keys, thousands of
 * nesting levels), spliced verbatim into a body by `serializeJson`.
 */
export class RawJson {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text.length > 60
      ? `${this.text.slice(0, 60)}…(${this.text.length} chars)`
      : this.text;
  }
}

/** JSON.stringify, except that RawJson values are written as they are. */
export function serializeJson(value: unknown): string {
  if (value instanceof RawJson) return value.text;
  if (Array.isArray(value)) return `[${value.map(serializeJson).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    const entries = Object.entries(value).filter(([, item]) => item !== undefined);
    return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${serializeJson(item)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** Characters that break naive code: NUL, controls, RTL and BOM marks, astral, lone surrogates. */
const SPECIAL_CHARACTERS = [
  '\u0000',
  '\u0001',
  '\u001f',
  '\n',
  '\t',
  '\u007f',
  '\u00a0',
  '\u200b',
  '\u200f',
  '\u202e',
  '\u2028',
  '\ufeff',
  '\ufffd',
  '\uffff',
  '\ud800',
  '\udfff',
  '𝕏',
  '😀',
  '👩‍👩‍👧',
  'ا',
  '"',
  '\\',
  '/',
  '%',
  '..',
  "'",
  '$',
  '{',
  '[',
  '__proto__',
];

/** One "character": printable ASCII, any code point (lone surrogates included) or a special. */
const unit = fc.oneof(
  { weight: 4, arbitrary: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)) },
  {
    weight: 2,
    arbitrary: fc.integer({ min: 0, max: 0x10ffff }).map((c) => String.fromCodePoint(c)),
  },
  { weight: 2, arbitrary: fc.constantFrom(...SPECIAL_CHARACTERS) },
);

export const oddString = (maxLength = 40): fc.Arbitrary<string> => fc.string({ unit, maxLength });

/** Long strings made by repetition: cheap to generate and to shrink. */
export const hugeString = fc
  .tuple(
    fc.constantFrom(1_000, 10_000, 100_000, 600_000, 1_100_000, 2_000_000),
    fc.constantFrom('a', 'é', '😀', '\u0000', '#tag '),
  )
  .map(([length, piece]) => piece.repeat(Math.ceil(length / piece.length)));

/** Thousands of nesting levels, as arrays or objects, optionally around a payload. */
export const deepNesting = fc
  .tuple(fc.constantFrom(100, 1_000, 5_000, 20_000), fc.boolean(), fc.constantFrom('1', '"x"', ''))
  .map(([depth, arrays, payload]) =>
    arrays
      ? new RawJson(`${'['.repeat(depth)}${payload}${']'.repeat(depth)}`)
      : new RawJson(`${'{"a":'.repeat(depth)}${payload || 'null'}${'}'.repeat(depth)}`),
  );

const oddNumber = fc.constantFrom(
  new RawJson('1e400'),
  new RawJson('-1e400'),
  new RawJson('-0'),
  new RawJson('1.0'),
  new RawJson('1E2'),
  new RawJson('123456789012345678901234567890'),
  new RawJson('0.0000000000000000000001'),
  Number.MAX_SAFE_INTEGER + 2,
  Number.MIN_VALUE,
  -1,
  0,
  2 ** 31,
  1.5,
);

/** Any JSON value, with a bias towards the shapes that break servers. */
export const anyJsonValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 4, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
  { weight: 3, arbitrary: oddString() },
  { weight: 2, arbitrary: oddNumber },
  { weight: 1, arbitrary: fc.constantFrom(null, true, false, [], {}, '', ' ') },
  { weight: 1, arbitrary: hugeString },
  { weight: 1, arbitrary: deepNesting },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      new RawJson('{"a":1,"a":2}'),
      new RawJson('{"__proto__":{"polluted":true}}'),
      new RawJson('{"constructor":{"prototype":{"polluted":true}}}'),
    ),
  },
);

/**
 * encodeURIComponent, except that a lone surrogate (which it refuses) becomes the bytes a
 * careless encoder would write for it (WTF-8), which the server must refuse to decode.
 */
export function encodePathValue(text: string): string {
  return text
    .split(/(\p{Surrogate})/u)
    .map((part) => {
      if (!/^\p{Surrogate}$/u.test(part)) return encodeURIComponent(part);
      const code = part.charCodeAt(0);
      const bytes = [0xed, 0xa0 | ((code >> 6) & 0x0f), 0x80 | (code & 0x3f)];
      return bytes.map((byte) => `%${byte.toString(16).toUpperCase()}`).join('');
    })
    .join('');
}

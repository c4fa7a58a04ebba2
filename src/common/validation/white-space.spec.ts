import { NOT_ONLY_WHITE_SPACE_PATTERN, trimWhiteSpace } from './white-space';

/** Unicode's White_Space property, as Rust's `char::is_whitespace` and pydantic read it. */
const UNICODE_WHITE_SPACE = [
  ...[0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x20, 0x85, 0xa0, 0x1680],
  ...Array.from({ length: 11 }, (_, i) => 0x2000 + i),
  ...[0x2028, 0x2029, 0x202f, 0x205f, 0x3000],
];

describe('trimWhiteSpace', () => {
  it('removes exactly the White_Space characters around a text', () => {
    for (const code of UNICODE_WHITE_SPACE) {
      const space = String.fromCodePoint(code);
      expect(trimWhiteSpace(`${space}name${space}`)).toBe('name');
    }
    // JavaScript's trim() removes these; pydantic does not.
    expect(trimWhiteSpace('\uFEFFname\u001C')).toBe('\uFEFFname\u001C');
    expect(trimWhiteSpace(' a  b ')).toBe('a  b');
    expect(trimWhiteSpace(' \u0085 ')).toBe('');
  });

  it('takes linear time, however long the white space inside', () => {
    const text = `a${' '.repeat(1_000_000)}a`;
    const started = performance.now();
    expect(trimWhiteSpace(` ${text} `)).toBe(text);
    // A regex trimming the end backtracks over the inner run: minutes at this size.
    expect(performance.now() - started).toBeLessThan(1_000);
  });
});

describe('NOT_ONLY_WHITE_SPACE_PATTERN', () => {
  it('matches a text unless every character of it is White_Space, with or without the Unicode flag', () => {
    const disagreements: string[] = [];
    for (const flags of ['', 'u']) {
      const pattern = new RegExp(NOT_ONLY_WHITE_SPACE_PATTERN, flags);
      for (let code = 0; code <= 0xffff; code += 1) {
        if (code >= 0xd800 && code <= 0xdfff) continue;
        const text = String.fromCharCode(code);
        if (pattern.test(text) !== (trimWhiteSpace(text) !== ''))
          disagreements.push(`U+${code.toString(16)} /${flags}`);
      }
    }
    expect(disagreements).toEqual([]);
  });
});

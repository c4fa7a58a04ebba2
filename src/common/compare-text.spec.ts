import fc from 'fast-check';
import { compareText } from './compare-text';

/** Postgres' C collation: UTF-8 bytes compared (memcmp), which is code-point order. */
const byUtf8 = (a: string, b: string) => Math.sign(Buffer.compare(Buffer.from(a), Buffer.from(b)));

describe(compareText.name, () => {
  it('orders a character past U+FFFF after U+E000–U+FFFF, as the C collation does', () => {
    expect(compareText('\uff01', '\u{1f600}')).toBe(-1);
    expect(compareText('\u{1f600}', '\uff01')).toBe(1);
    expect(compareText('a', 'ab')).toBe(-1);
    expect(compareText('x', 'x')).toBe(0);
  });

  it('orders as UTF-8 bytes do', () => {
    const text = fc.string({ unit: 'grapheme', maxLength: 6 });
    fc.assert(
      fc.property(text, text, (a, b) => {
        expect(compareText(a, b)).toBe(byUtf8(a, b));
      }),
      { numRuns: 20_000, seed: 14 },
    );
  });
});

import fc from 'fast-check';
import { composedLowerCase } from './characters';

describe(composedLowerCase.name, () => {
  // Lower-casing a composed text can decompose it (a property-based audit): composed after.
  it('composes what lower-casing decomposes', () => {
    expect(composedLowerCase('J\u030c')).toBe('\u01f0');
    expect(composedLowerCase('\u03aa\u0301')).toBe('\u0390');
    expect(composedLowerCase('Cafe\u0301')).toBe('caf\u00e9');
  });

  it('gives one form of a text however its accents are composed, and keeps it', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', maxLength: 12 }), (text) => {
        const folded = composedLowerCase(text);
        expect(composedLowerCase(folded)).toBe(folded);
        expect(composedLowerCase(text.normalize('NFD'))).toBe(folded);
      }),
      { numRuns: 5000, seed: 14 },
    );
  });
});

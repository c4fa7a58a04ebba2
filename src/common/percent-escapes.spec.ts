import { isPercentDecodable, isUtf8Run } from './percent-escapes';

const reads = (text: string): boolean => {
  try {
    decodeURIComponent(text);
    return true;
  } catch {
    return false;
  }
};

describe(isPercentDecodable.name, () => {
  it.each([
    ['plain text', 'tasks/x', true],
    ['ASCII escapes', '%41%2F%25', true],
    ['a two-byte character', 'caf%C3%A9', true],
    ['a four-byte character', '%F0%9F%98%80', true],
    ['a % starting no escape', '100%', false],
    ['a half escape', '%4', false],
    ['a byte that is no UTF-8', 'a%ffb', false],
    ['a sequence cut short', '%E2%82', false],
    ['a sequence cut by a character', '%E2%82x%AC', false],
    ['an overlong encoding', '%C0%80', false],
    ['an encoded surrogate', '%ED%A0%80', false],
    ['a code point past U+10FFFF', '%F4%90%80%80', false],
  ])('reads %s as decodeURIComponent does', (_, text, decodable) => {
    expect(reads(text)).toBe(decodable);
    expect(isPercentDecodable(text)).toBe(decodable);
  });
});

describe(isUtf8Run.name, () => {
  it('tells a run of escapes that is UTF-8 from one that is not', () => {
    expect(isUtf8Run('%41%42')).toBe(true);
    expect(isUtf8Run('%e2%82%ac')).toBe(true);
    expect(isUtf8Run('%e2%82')).toBe(false);
    expect(isUtf8Run('%ff')).toBe(false);
  });
});

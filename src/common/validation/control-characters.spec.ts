import {
  CONTROL_CHARACTER,
  FORMAT_CHARACTER,
  HIDDEN_FORMAT_CHARACTER,
  withUnprintablesEscaped,
} from './control-characters';

describe(withUnprintablesEscaped.name, () => {
  it('writes every control character as its escape, printable text unchanged', () => {
    expect(withUnprintablesEscaped('a\u0000b\u001b[31m\r\n\t\u007f\u0085\u2028\u2029')).toBe(
      'a\\u0000b\\u001b[31m\\u000d\\u000a\\u0009\\u007f\\u0085\\u2028\\u2029',
    );
    for (const text of ['tao-x', 'é-X 🙂', '\u00a0', 'a\\u0000b', '\ufffd'])
      expect(withUnprintablesEscaped(text)).toBe(text);
  });

  // A fuzz audit's finding: `\u202eabc` (RIGHT-TO-LEFT OVERRIDE) and `tao-x\u200b` were quoted
  // as they are, the first shown reversed, the second exactly as `tao-x`.
  it('writes every format character as its escape, one beyond U+FFFF as JSON does (two)', () => {
    expect(withUnprintablesEscaped('\u202eabc tao-x\u200b \ufeff\u2066\u200d\u00ad')).toBe(
      '\\u202eabc tao-x\\u200b \\ufeff\\u2066\\u200d\\u00ad',
    );
    expect(withUnprintablesEscaped('a\u{E0041}b')).toBe('a\\udb40\\udc41b');
  });

  it('leaves no control or format character behind', () => {
    const every = Array.from({ length: 0x110000 }, (_, code) =>
      code >= 0xd800 && code <= 0xdfff ? '' : String.fromCodePoint(code),
    ).join('');
    const escaped = withUnprintablesEscaped(every);
    expect(CONTROL_CHARACTER.test(escaped)).toBe(false);
    expect(FORMAT_CHARACTER.test(escaped)).toBe(false);
  });
});

describe('HIDDEN_FORMAT_CHARACTER', () => {
  it('is every format character but the joiners that emoji and some scripts are written with', () => {
    for (const hidden of ['\u202e', '\u2066', '\u200b', '\u200e', '\ufeff', '\u2060', '\u{E0041}'])
      expect(HIDDEN_FORMAT_CHARACTER.test(`a${hidden}b`)).toBe(true);
    for (const text of ['👩\u200d💻', 'می\u200cخواهم', 'tao-x', 'é 🙂'])
      expect(HIDDEN_FORMAT_CHARACTER.test(text)).toBe(false);
  });
});

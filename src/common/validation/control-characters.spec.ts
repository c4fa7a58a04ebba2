import { CONTROL_CHARACTER, withControlsEscaped } from './control-characters';

describe(withControlsEscaped.name, () => {
  it('writes every control character as its escape, printable text unchanged', () => {
    expect(withControlsEscaped('a\u0000b\u001b[31m\r\n\t\u007f\u0085\u2028\u2029')).toBe(
      'a\\u0000b\\u001b[31m\\u000d\\u000a\\u0009\\u007f\\u0085\\u2028\\u2029',
    );
    for (const text of ['tao-x', 'é-X 🙂', '\u00a0', 'a\\u0000b', '\ufffd'])
      expect(withControlsEscaped(text)).toBe(text);
  });

  it('leaves no control character behind', () => {
    const every = Array.from({ length: 0x2030 }, (_, code) => String.fromCharCode(code)).join('');
    expect(CONTROL_CHARACTER.test(withControlsEscaped(every))).toBe(false);
  });
});

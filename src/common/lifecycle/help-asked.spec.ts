import { helpAsked } from './help-asked';

describe(helpAsked.name, () => {
  it('is asked by --help or -h alone', () => {
    expect(helpAsked(['--help'])).toBe(true);
    expect(helpAsked(['-h'])).toBe(true);
  });

  it('is not asked by other arguments, or none', () => {
    expect(helpAsked([])).toBe(false);
    expect(helpAsked(['--revert'])).toBe(false);
    expect(helpAsked(['--helpful'])).toBe(false);
  });

  // Read as an unknown option it was refused with a message that made no sense (a CLI audit).
  it('refuses --help beside other arguments, saying so', () => {
    expect(() => helpAsked(['--source', 'x', '--help'])).toThrow('--help takes no other arguments');
    expect(() => helpAsked(['-h', '--revert'])).toThrow('-h takes no other arguments');
  });
});

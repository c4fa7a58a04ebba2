import { Issues, parseSource } from '../desirability-fields';
import { PLATFORM_PATTERN } from './desirability-job.dto';

// The document's pattern for `platform` and `source_name` says what the parser takes: it refused
// ` x`, which the service took and answered back (a fuzzing audit's finding).
describe('PLATFORM_PATTERN', () => {
  const pattern = new RegExp(PLATFORM_PATTERN);
  const taken = (value: string) => {
    const issues = new Issues();
    return parseSource(value, ['platform'], issues) !== undefined;
  };

  it.each([
    'x',
    'X',
    'reddit',
    'ReDdIt',
    ' x',
    '\tReddit ',
    '\u00a0x\u2028',
    '\ufeffreddit',
    '',
    ' ',
    'youtube',
    'x x',
    'xreddit',
    'r eddit',
    '\u200bx',
  ])('matches %j exactly when the parser takes it', (value) => {
    expect(pattern.test(value)).toBe(taken(value));
  });
});

import { benchFlags, flagsUsage } from './flags';

const OPTIONS = {
  'serve-app': { type: 'boolean' },
  seconds: { type: 'string' },
  profile: { type: 'boolean' },
} as const;

/** Runs benchFlags with process.exit and the two streams caught; returns what it printed. */
function run(argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  jest.spyOn(process.stdout, 'write').mockImplementation((text) => out.push(String(text)) > 0);
  jest.spyOn(process.stderr, 'write').mockImplementation((text) => err.push(String(text)) > 0);
  jest.spyOn(process, 'exit').mockImplementation((code) => {
    throw new Error(`exit ${String(code)}`);
  });
  let outcome: string;
  try {
    outcome = JSON.stringify(benchFlags({ options: OPTIONS }, argv).values);
  } catch (error) {
    outcome = (error as Error).message;
  } finally {
    jest.restoreAllMocks();
  }
  return { outcome, out: out.join(''), err: err.join('') };
}

describe('benchFlags', () => {
  it('parses known flags', () => {
    expect(run(['--seconds', '3', '--profile']).outcome).toBe('{"seconds":"3","profile":true}');
  });

  it.each(['--help', '-h'])('prints the usage for %s and exits 0', (flag) => {
    const { outcome, out } = run([flag]);
    expect(outcome).toBe('exit 0');
    expect(out).toMatch(/^usage: node .* \[--seconds <value>\] \[--profile\]\n$/);
  });

  it('names an unknown flag beside the usage and exits 2, without a stack trace', () => {
    const { outcome, err } = run(['--secnods', '3']);
    expect(outcome).toBe('exit 2');
    expect(err).toContain("Unknown option '--secnods'");
    expect(err).toContain('[--seconds <value>]');
    expect(err).not.toContain('    at ');
  });

  it('names a flag given without its value', () => {
    const { outcome, err } = run(['--seconds']);
    expect(outcome).toBe('exit 2');
    expect(err).toContain("'--seconds <value>' argument missing");
  });
});

describe('flagsUsage', () => {
  it('leaves out the flags that start a benchmark’s own children', () => {
    expect(flagsUsage(OPTIONS, 'bench/x.js')).toBe(
      'usage: node bench/x.js [--seconds <value>] [--profile]',
    );
  });
});

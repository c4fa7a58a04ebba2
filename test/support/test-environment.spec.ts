import { execFile } from 'node:child_process';
import { createRequire } from 'node:module';
import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..');
const FIXTURES = 'test/support/environment-fixtures';

interface JestRun {
  json: {
    testResults: {
      status: string;
      message: string;
      assertionResults: { title: string; status: string; failureMessages: string[] }[];
    }[];
  };
  stderr: string;
}

/** Runs one fixture in a jest of its own, in the project's test environment. */
function runFixture(fixture: string): Promise<JestRun> {
  const path = `${FIXTURES}/${fixture}`;
  const config = {
    rootDir: ROOT,
    testEnvironment: '<rootDir>/test/support/test-environment.ts',
    testMatch: [`<rootDir>/${path}`],
    transform: unitProject().transform,
  };
  const args = [
    join(ROOT, 'node_modules', 'jest', 'bin', 'jest.js'),
    '--config',
    JSON.stringify(config),
    '--json',
    '--ci',
    '--runInBand',
    // The fixture's server holds jest's own process open: it would wait for it until killed.
    '--forceExit',
    path,
  ];
  return new Promise((resolve, reject) =>
    execFile(process.execPath, args, { cwd: ROOT, timeout: 90_000 }, (error, stdout, stderr) => {
      // jest exits 1 for a failed suite: that is what is tested; its JSON is on stdout.
      try {
        resolve({ json: JSON.parse(stdout) as JestRun['json'], stderr });
      } catch {
        reject(error ?? new Error(`no JSON from jest: ${stdout}`));
      }
    }),
  );
}

/** The unit project of jest.config.js, whose transform the fixture's jest takes. */
function unitProject(): { transform: unknown } {
  const { projects } = createRequire(__filename)(join(ROOT, 'jest.config.js')) as {
    projects: { displayName: string; transform: unknown }[];
  };
  return projects.find((project) => project.displayName === 'unit')!;
}

describe('The test environment, for a file that leaves a server open', () => {
  it('fails the file, naming what it left, when its tests passed', async () => {
    const {
      json: { testResults },
    } = await runFixture('passes-and-leaks.fixture.ts');

    expect(testResults).toHaveLength(1);
    expect(testResults[0].status).toBe('failed');
    expect(testResults[0].message).toContain('left 1 listening server(s) open');
  }, 120_000);

  // Jest drops a file's results when its environment's teardown throws: the assertion that made
  // the test skip its cleanup was reported nowhere (a test hygiene audit).
  it("reports a failing test's own failure, and says on stderr what it left", async () => {
    const {
      json: { testResults },
      stderr,
    } = await runFixture('fails-and-leaks.fixture.ts');

    expect(testResults).toHaveLength(1);
    const [suite] = testResults;
    expect(suite.status).toBe('failed');
    expect(suite.assertionResults).toEqual([
      expect.objectContaining({
        status: 'failed',
        failureMessages: [expect.stringContaining('what it expected')],
      }),
    ]);
    expect(stderr).toContain('left 1 listening server(s) open');
  }, 120_000);
});

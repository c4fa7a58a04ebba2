import { execFile } from 'node:child_process';
import { createRequire } from 'node:module';
import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..');
const FIXTURE = 'test/support/guard-fixtures/swallows-refused-connection.fixture.ts';

interface JestJson {
  testResults: {
    name: string;
    status: string;
    message: string;
    assertionResults: { title: string; status: string }[];
  }[];
}

/** Runs the fixture in a jest of its own with the guard set up as jest.config.js sets it. */
function runFixture(): Promise<JestJson> {
  const config = {
    rootDir: ROOT,
    testEnvironment: 'node',
    testMatch: [`<rootDir>/${FIXTURE}`],
    transform: unitProject().transform,
    setupFilesAfterEnv: ['<rootDir>/test/support/loopback-only.ts'],
  };
  const args = [
    join(ROOT, 'node_modules', 'jest', 'bin', 'jest.js'),
    '--config',
    JSON.stringify(config),
    '--json',
    '--ci',
    '--runInBand',
    FIXTURE,
  ];
  return new Promise((resolve, reject) =>
    execFile(process.execPath, args, { cwd: ROOT, timeout: 90_000 }, (error, stdout) => {
      // jest exits 1 for a failed suite: that is what is tested; its JSON is on stdout.
      try {
        resolve(JSON.parse(stdout) as JestJson);
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

describe('The loopback guard', () => {
  it('fails a spec that swallowed a refused connection, naming where it went', async () => {
    const { testResults } = await runFixture();

    expect(testResults).toHaveLength(1);
    const [suite] = testResults;
    // The test itself passed: the refusal was taken in its stride ...
    expect(suite.assertionResults).toEqual([expect.objectContaining({ status: 'passed' })]);
    // ... and the suite failed anyway, naming the address.
    expect(suite.status).toBe('failed');
    expect(suite.message).toContain('refusedConnections');
    expect(suite.message).toContain('203.0.113.9:8091');
  }, 120_000);
});

import { FixtureJestRun, runFixtureJest } from './fixture-jest';

const FIXTURES = 'test/support/environment-fixtures';

/** Runs one fixture in a jest of its own, in the project's test environment. */
function runFixture(fixture: string): Promise<FixtureJestRun> {
  return runFixtureJest(
    `${FIXTURES}/${fixture}`,
    { testEnvironment: '<rootDir>/test/support/test-environment.ts' },
    // The fixture's server holds jest's own process open: it would wait for it until killed.
    ['--forceExit'],
  );
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

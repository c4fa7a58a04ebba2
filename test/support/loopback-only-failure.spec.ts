import { FixtureJestRun, runFixtureJest } from './fixture-jest';

const FIXTURE = 'test/support/guard-fixtures/swallows-refused-connection.fixture.ts';

/** Runs the fixture in a jest of its own with the guard set up as jest.config.js sets it. */
async function runFixture(): Promise<FixtureJestRun['json']> {
  const { json } = await runFixtureJest(FIXTURE, {
    testEnvironment: 'node',
    setupFilesAfterEnv: ['<rootDir>/test/support/loopback-only.ts'],
  });
  return json;
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

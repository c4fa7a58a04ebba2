import { randomBytes } from 'node:crypto';

export {
  createDatabase,
  dropDatabase,
  isReachable,
  onServer,
} from '../../bench/support/database-server';

/** The database of this test run, as published by the global setup to every worker. */
export function testDatabaseUrl(): string {
  const url = process.env.TEST_RUN_DATABASE_URL;
  if (!url)
    throw new Error('TEST_RUN_DATABASE_URL is not set: run the tests through jest (global setup)');
  return url;
}

/**
 * A name for an extra database of this run (a test that owns global state, or several apps on
 * one database): prefixed with the run's database name, so that the global teardown drops it
 * even when the test that created it failed before its own cleanup.
 */
export function scratchDatabaseName(label: string): string {
  const run = process.env.TEST_RUN_DATABASE_NAME;
  if (!run) throw new Error('TEST_RUN_DATABASE_NAME is not set: run the tests through jest');
  return `${run}_${label.slice(0, 12)}_${randomBytes(4).toString('hex')}`;
}

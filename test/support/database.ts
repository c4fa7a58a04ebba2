export {
  createDatabase,
  dropDatabase,
  isReachable,
  onServer,
  withDatabase,
} from '../../src/database/database-server';

/** The database of this test run, as published by the global setup to every worker. */
export function testDatabaseUrl(): string {
  const url = process.env.TEST_RUN_DATABASE_URL;
  if (!url)
    throw new Error('TEST_RUN_DATABASE_URL is not set: run the tests through jest (global setup)');
  return url;
}

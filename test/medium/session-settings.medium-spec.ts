import { Pool } from 'pg';
import { DataSource } from 'typeorm';
import {
  buildDataSourceOptions,
  buildMigrationDataSourceOptions,
  buildProbePoolConfig,
} from '../../src/database/data-source-options';
import { migrateDatabase, runMigrations } from '../../src/database/migrate';
import { createDatabase, dropDatabase, onServer, scratchDatabaseName } from '../support/database';

/**
 * A database whose defaults are all other than what the code and node-postgres are written for,
 * as a hosted Postgres or a DBA may set them (a hosted-Postgres audit): every session the
 * service opens is set back to ours (data-source-options.ts, SESSION_DEFAULTS).
 */
describe('session settings against a database with other defaults', () => {
  const serverUrl = process.env.TEST_RUN_SERVER_URL!;
  const name = scratchDatabaseName('settings');
  let url: string;

  beforeAll(async () => {
    url = await createDatabase(serverUrl, name);
    await onServer(serverUrl, async (client) => {
      for (const setting of [
        `DateStyle = 'SQL, DMY'`,
        `IntervalStyle = 'sql_standard'`,
        `TimeZone = 'Pacific/Chatham'`,
        'extra_float_digits = 0',
        `default_transaction_isolation = 'serializable'`,
        `statement_timeout = '3s'`,
        `lock_timeout = '1s'`,
      ])
        await client.query(`ALTER DATABASE "${name}" SET ${setting}`);
    });
    await migrateDatabase(url);
  });
  afterAll(() => dropDatabase(serverUrl, name));

  it("sets the app's sessions to ours, and reads timestamps and intervals back", async () => {
    const dataSource = await new DataSource(
      buildDataSourceOptions(url, { poolSize: 1, statementTimeoutMs: 7000 }),
    ).initialize();
    try {
      const [row] = await dataSource.query<Record<string, unknown>[]>(
        `SELECT current_setting('DateStyle') AS date_style,
           current_setting('IntervalStyle') AS interval_style,
           current_setting('TimeZone') AS time_zone,
           current_setting('extra_float_digits') AS float_digits,
           current_setting('default_transaction_isolation') AS isolation,
           current_setting('statement_timeout') AS statement_timeout,
           now() AS now,
           date_trunc('hour', timestamptz '2026-12-07 05:30:00+00') AS hour,
           interval '90 minutes' AS interval,
           0.1::float8 AS tenth`,
      );
      expect(row).toMatchObject({
        date_style: 'ISO, MDY',
        interval_style: 'postgres',
        time_zone: 'UTC',
        float_digits: '1',
        isolation: 'read committed',
        statement_timeout: '7s',
        hour: new Date('2026-12-07T05:00:00Z'),
        interval: expect.objectContaining({ hours: 1, minutes: 30 }),
        tenth: 0.1,
      });
      expect(row.now).toBeInstanceOf(Date);
    } finally {
      await dataSource.destroy();
    }
  });

  it("sets the health check's session too", async () => {
    const pool = new Pool(buildProbePoolConfig(url));
    try {
      const { rows } = await pool.query<{ date_style: string; time_zone: string }>(
        `SELECT current_setting('DateStyle') AS date_style, current_setting('TimeZone') AS time_zone`,
      );
      expect(rows).toEqual([{ date_style: 'ISO, MDY', time_zone: 'UTC' }]);
    } finally {
      await pool.end();
    }
  });

  // RESET went back past the session's own lock timeout, to the database's.
  it('gives the migrating connections back with their own lock timeout', async () => {
    const dataSource = await new DataSource(
      buildMigrationDataSourceOptions(url, undefined, true),
    ).initialize();
    try {
      expect(await runMigrations(dataSource)).toEqual([]);
      // Both connections of the pool at once: the one that held the migration lock is one.
      const timeouts = await Promise.all(
        [0, 1].map(async () => {
          const [row] = await dataSource.query<{ lock_timeout: string }[]>(
            `SELECT current_setting('lock_timeout') AS lock_timeout, pg_sleep(0.2)`,
          );
          return row.lock_timeout;
        }),
      );
      expect(timeouts).toEqual(['2s', '2s']);
    } finally {
      await dataSource.destroy();
    }
  });
});

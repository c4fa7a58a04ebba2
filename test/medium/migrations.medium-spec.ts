import { Client } from 'pg';
import { DataSource } from 'typeorm';
import {
  buildDataSourceOptions,
  buildMigrationDataSourceOptions,
} from '../../src/database/data-source-options';
import { describeMigrations, migrateDatabase, MIGRATION_LOCK_ID } from '../../src/database/migrate';
import { migrateFromCommandLine } from '../../src/database/migrate-command';
import { createDatabase, dropDatabase, scratchDatabaseName } from '../support/database';

/** SHOW statement_timeout on a connection made with `options`. */
async function statementTimeoutOf(options: ReturnType<typeof buildDataSourceOptions>) {
  const dataSource = await new DataSource(options).initialize();
  try {
    const [row] = await dataSource.query<{ statement_timeout: string }[]>('SHOW statement_timeout');
    return row.statement_timeout;
  } finally {
    await dataSource.destroy();
  }
}

async function appliedMigrations(url: string): Promise<number> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ count: string }>('SELECT count(*) FROM migrations');
    return Number(rows[0].count);
  } finally {
    await client.end();
  }
}

describe('Migrating the schema (migrateDatabase: start-up, `npm run migration:run`, tests)', () => {
  const serverUrl = () => process.env.TEST_RUN_SERVER_URL!;
  let name: string;
  let url: string;

  beforeEach(async () => {
    name = scratchDatabaseName('migrate');
    url = await createDatabase(serverUrl(), name);
  });

  afterEach(async () => {
    await dropDatabase(serverUrl(), name);
  });

  it('migrates on connections without the statement timeout the app answers under', async () => {
    expect(await statementTimeoutOf(buildDataSourceOptions(url))).toBe('15s');
    expect(await statementTimeoutOf(buildMigrationDataSourceOptions(url))).toBe('0');
  });

  it('waits for the migration lock held by a replica that is migrating, then migrates', async () => {
    const replica = new Client({ connectionString: url });
    await replica.connect();
    await replica.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_ID]);
    let settled = false;
    const migrating = migrateDatabase(url).finally(() => (settled = true));

    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(settled).toBe(false);
    const { rows } = await replica.query<{ exists: boolean }>(
      "SELECT to_regclass('public.migrations') IS NOT NULL AS exists",
    );
    expect(rows[0].exists).toBe(false);

    await replica.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_ID]);
    await replica.end();
    const { applied, unknown } = await migrating;
    expect(applied.length).toBeGreaterThan(10);
    expect(unknown).toEqual([]);
    expect(await appliedMigrations(url)).toBe(applied.length);
  });

  it('from the command line: applies what is pending, then nothing; refuses without DATABASE_URL', async () => {
    const { applied } = await migrateFromCommandLine({ DATABASE_URL: url });
    expect(applied.length).toBeGreaterThan(10);
    // In production too, with nothing else the service needs to run.
    expect(await migrateFromCommandLine({ NODE_ENV: 'production', DATABASE_URL: url })).toEqual({
      applied: [],
      unknown: [],
    });
    expect(await appliedMigrations(url)).toBe(applied.length);

    // A newer release's migration: named, so that an operator who went back knows to revert it.
    const client = new Client({ connectionString: url });
    await client.connect();
    await client.query(
      "INSERT INTO migrations (timestamp, name) VALUES (1799999999999, 'FromTheFuture1799999999999')",
    );
    await client.end();
    const newer = await migrateFromCommandLine({ DATABASE_URL: url });
    expect(newer).toEqual({ applied: [], unknown: ['FromTheFuture1799999999999'] });
    expect(describeMigrations(newer).warn).toMatch(
      /^the database has migrations this release does not know \(FromTheFuture1799999999999\): a newer release ran them/,
    );

    await expect(migrateFromCommandLine({})).rejects.toThrow(
      'DATABASE_URL must be set to run migrations from the CLI',
    );
  });
});

import { EventEmitter } from 'node:events';
import type { ClientBase, PoolConfig } from 'pg';
import {
  buildDataSourceOptions,
  buildMigrationDataSourceOptions,
  buildProbePoolConfig,
  MIGRATION_LOCK_TIMEOUT_MS,
  MIGRATIONS,
  PROBE_QUERY_TIMEOUT_MS,
} from './data-source-options';

const URL = 'postgres://gateway@127.0.0.1:5432/validator';

/** What pg-pool is given: TypeORM passes `extra` to it as it is. */
function poolOf(options: ReturnType<typeof buildDataSourceOptions>): PoolConfig {
  return (options as { extra: PoolConfig }).extra;
}

/** The bounds every connection to Postgres keeps (docs/decisions.md, "Outages"). */
const BOUNDS = {
  connectionTimeoutMillis: 5000,
  keepAlive: true,
  keepAliveInitialDelayMillis: 10000,
};

/** A connection as pg-pool hands it to `onConnect`, which records what the session is set to. */
function fakeConnection() {
  const settings: Record<string, string> = {};
  const connection = Object.assign(new EventEmitter(), {
    settings,
    query: jest.fn(async (_text: string, values: string[]) => {
      for (let i = 0; i < values.length; i += 2) connection.settings[values[i]] = values[i + 1];
    }),
  });
  return connection;
}

/** What `onConnect` sets a new connection's session to. */
async function sessionOf(pool: PoolConfig): Promise<Record<string, string>> {
  const connection = fakeConnection();
  // Typed as returning nothing; the service's returns the set-up's promise.
  await (pool.onConnect!(connection as unknown as ClientBase) as unknown as Promise<void>);
  return connection.settings;
}

/** Set on every session, whatever the server's, the database's or the role's defaults. */
const SESSION = {
  DateStyle: 'ISO, MDY',
  IntervalStyle: 'postgres',
  TimeZone: 'UTC',
  extra_float_digits: '1',
  default_transaction_isolation: 'read committed',
  idle_in_transaction_session_timeout: '60000',
};

describe(buildDataSourceOptions.name, () => {
  it('bounds every wait on Postgres, with the defaults when nothing is tuned', async () => {
    const pool = poolOf(buildDataSourceOptions(URL));
    expect(pool).toMatchObject({ ...BOUNDS, max: 10, application_name: 'validator-gateway' });
    expect(await sessionOf(pool)).toEqual({ ...SESSION, statement_timeout: '15000' });
  });

  it('takes the pool size and timeouts it is tuned with', async () => {
    const pool = poolOf(
      buildDataSourceOptions(URL, { poolSize: 3, statementTimeoutMs: 2000, connectTimeoutMs: 700 }),
    );
    expect(pool).toMatchObject({ max: 3, connectionTimeoutMillis: 700 });
    expect(await sessionOf(pool)).toMatchObject({ statement_timeout: '2000' });
  });

  // A pooler in session mode (PgBouncer) refuses a connection whose startup parameters it does
  // not know, and its usual remedy drops them unsaid: the session is set once connected.
  it('sends no setting of the session as a startup parameter', () => {
    const pool = poolOf(buildDataSourceOptions(URL)) as Record<string, unknown>;
    for (const name of [...Object.keys(SESSION), 'statement_timeout', 'lock_timeout', 'options'])
      expect(pool[name]).toBeUndefined();
  });

  // The schema changes only through the migrations, run under their lock (migrate.ts).
  it('never changes the schema by itself', () => {
    expect(buildDataSourceOptions(URL)).toMatchObject({
      synchronize: false,
      migrationsRun: false,
      migrations: MIGRATIONS,
      migrationsTableName: 'migrations',
    });
  });

  // An 'error' event nobody hears throws, and would end the process (listenForErrors).
  it('gives every connection an error listener', async () => {
    const connection = fakeConnection();
    await (poolOf(buildDataSourceOptions(URL)).onConnect!(
      connection as unknown as ClientBase,
    ) as unknown as Promise<void>);
    expect(() => connection.emit('error', new Error('terminating connection'))).not.toThrow();
  });
});

describe(buildMigrationDataSourceOptions.name, () => {
  // One connection holds the lock while the other migrates: with one, migrating waits forever.
  it('migrates on two connections without a statement timeout, keeping the other bounds', async () => {
    const pool = poolOf(buildMigrationDataSourceOptions(URL, 900));
    expect(pool).toMatchObject({ ...BOUNDS, max: 2, connectionTimeoutMillis: 900 });
    expect(await sessionOf(pool)).toEqual({ ...SESSION, statement_timeout: '0' });
  });

  it('gives up waiting for a lock after MIGRATION_LOCK_TIMEOUT_MS when it gives way', async () => {
    const pool = poolOf(buildMigrationDataSourceOptions(URL, 900, true));
    expect(await sessionOf(pool)).toMatchObject({
      lock_timeout: String(MIGRATION_LOCK_TIMEOUT_MS),
    });
  });
});

describe(buildProbePoolConfig.name, () => {
  it("keeps one connection open between checks, with a query timer and the pool's bounds", async () => {
    const pool = buildProbePoolConfig(URL, { connectTimeoutMs: 800 });
    expect(await sessionOf(pool)).toEqual({ ...SESSION, statement_timeout: '15000' });
    expect(pool).toMatchObject({
      ...BOUNDS,
      connectionString: URL,
      max: 1,
      idleTimeoutMillis: 0,
      query_timeout: PROBE_QUERY_TIMEOUT_MS,
      connectionTimeoutMillis: 800,
      application_name: 'validator-gateway health',
    });
  });
});

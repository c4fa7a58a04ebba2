import { EventEmitter } from 'node:events';
import type { ClientBase, PoolConfig } from 'pg';
import {
  buildDataSourceOptions,
  buildMigrationDataSourceOptions,
  buildProbePoolConfig,
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
  idle_in_transaction_session_timeout: 60000,
  keepAlive: true,
  keepAliveInitialDelayMillis: 10000,
};

describe(buildDataSourceOptions.name, () => {
  it('bounds every wait on Postgres, with the defaults when nothing is tuned', () => {
    expect(poolOf(buildDataSourceOptions(URL))).toMatchObject({
      ...BOUNDS,
      max: 10,
      statement_timeout: 15000,
      application_name: 'validator-gateway',
    });
  });

  it('takes the pool size and timeouts it is tuned with', () => {
    expect(
      poolOf(
        buildDataSourceOptions(URL, {
          poolSize: 3,
          statementTimeoutMs: 2000,
          connectTimeoutMs: 700,
        }),
      ),
    ).toMatchObject({ max: 3, statement_timeout: 2000, connectionTimeoutMillis: 700 });
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
  it('gives every connection an error listener', () => {
    const connection = new EventEmitter();
    poolOf(buildDataSourceOptions(URL)).onConnect!(connection as unknown as ClientBase);
    expect(() => connection.emit('error', new Error('terminating connection'))).not.toThrow();
  });
});

describe(buildMigrationDataSourceOptions.name, () => {
  // One connection holds the lock while the other migrates: with one, migrating waits forever.
  it('migrates on two connections without a statement timeout, keeping the other bounds', () => {
    const pool = poolOf(buildMigrationDataSourceOptions(URL, 900));
    expect(pool).toMatchObject({
      ...BOUNDS,
      max: 2,
      statement_timeout: 0,
      connectionTimeoutMillis: 900,
    });
    expect(pool.onConnect).toBeDefined();
  });
});

describe(buildProbePoolConfig.name, () => {
  it("keeps one connection open between checks, with a query timer and the pool's bounds", () => {
    expect(buildProbePoolConfig(URL, { connectTimeoutMs: 800 })).toMatchObject({
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

import type { ClientBase, PoolConfig } from 'pg';
import { DataSourceOptions } from 'typeorm';
import { DatabaseTuning, DEFAULT_DATABASE_TUNING } from '../config/app-config';
import { explicitTlsMode } from '../config/database-tls';
import { InitialSchema1763700000000 } from './migrations/1763700000000-InitialSchema';
import { RepoNames1763800000000 } from './migrations/1763800000000-RepoNames';
import { MinerIndex1763900000000 } from './migrations/1763900000000-MinerIndex';
import { ScrapingTasks1764000000000 } from './migrations/1764000000000-ScrapingTasks';
import { MinerLabelArrays1764150000000 } from './migrations/1764150000000-MinerLabelArrays';
import { MinerCalls1764200000000 } from './migrations/1764200000000-MinerCalls';
import { MetagraphState1764300000000 } from './migrations/1764300000000-MetagraphState';
import { TaskWeights1764400000000 } from './migrations/1764400000000-TaskWeights';
import { KeyExpiryAndLimits1764500000000 } from './migrations/1764500000000-KeyExpiryAndLimits';
import { TaskParquetDatasets1764510000000 } from './migrations/1764510000000-TaskParquetDatasets';
import { ItemStore1764600000000 } from './migrations/1764600000000-ItemStore';
import { DesirabilityPublications1764710000000 } from './migrations/1764710000000-DesirabilityPublications';
import { NetworkDesirabilities1764720000000 } from './migrations/1764720000000-NetworkDesirabilities';
import { UnknownStake1764731000000 } from './migrations/1764731000000-UnknownStake';
import { TaskCollectionPaging1764740000000 } from './migrations/1764740000000-TaskCollectionPaging';
import { TaskFailureReasons1764750000000 } from './migrations/1764750000000-TaskFailureReasons';
import { LargestBucketPerHour1764752000000 } from './migrations/1764752000000-LargestBucketPerHour';
import { IndexMissedSyncs1764760000000 } from './migrations/1764760000000-IndexMissedSyncs';
import { TaskCollectionFailures1764770000000 } from './migrations/1764770000000-TaskCollectionFailures';
import { ParquetTextStatistics1764780000000 } from './migrations/1764780000000-ParquetTextStatistics';
import { TaskCompletedAtIndex1764790000000 } from './migrations/1764790000000-TaskCompletedAtIndex';
import { ParquetVersion1764800000000 } from './migrations/1764800000000-ParquetVersion';
import { ParquetVersionGuard1764810000000 } from './migrations/1764810000000-ParquetVersionGuard';
import { LabelTaskIndex1764820000000 } from './migrations/1764820000000-LabelTaskIndex';
import { TaskCompileFailures1764830000000 } from './migrations/1764830000000-TaskCompileFailures';
import { MinerFailingUntil1764840000000 } from './migrations/1764840000000-MinerFailingUntil';
import { MetagraphStateNetuid1764850000000 } from './migrations/1764850000000-MetagraphStateNetuid';
import { MetagraphBlockAdvancedAt1764860000000 } from './migrations/1764860000000-MetagraphBlockAdvancedAt';
import { MetagraphStateGenesis1764920000000 } from './migrations/1764920000000-MetagraphStateGenesis';
import { ParquetWrittenAt1764930000000 } from './migrations/1764930000000-ParquetWrittenAt';
import { JobRunsCountedAt1764940000000 } from './migrations/1764940000000-JobRunsCountedAt';
import { PublicationTarget1764941000000 } from './migrations/1764941000000-PublicationTarget';
import { AggregatesVersionId1764950000000 } from './migrations/1764950000000-AggregatesVersionId';
import { StoredXItemSeconds1764960000000 } from './migrations/1764960000000-StoredXItemSeconds';
import { TaskItemsOrderIndex1764970000000 } from './migrations/1764970000000-TaskItemsOrderIndex';
import { TaskListOrderIndexes1764980000000 } from './migrations/1764980000000-TaskListOrderIndexes';
import { LabelIdsCycle1764990000000 } from './migrations/1764990000000-LabelIdsCycle';
import { StoredItemsLabelKey1765000000000 } from './migrations/1765000000000-StoredItemsLabelKey';
import { DatasetWrittenAt1765010000000 } from './migrations/1765010000000-DatasetWrittenAt';
import { JobStatusCheckAndColumnTypes1765020000000 } from './migrations/1765020000000-JobStatusCheckAndColumnTypes';
import { ErasedAuthors1765030000000 } from './migrations/1765030000000-ErasedAuthors';

export const MIGRATIONS = [
  InitialSchema1763700000000,
  RepoNames1763800000000,
  MinerIndex1763900000000,
  ScrapingTasks1764000000000,
  MinerLabelArrays1764150000000,
  MinerCalls1764200000000,
  MetagraphState1764300000000,
  TaskWeights1764400000000,
  KeyExpiryAndLimits1764500000000,
  TaskParquetDatasets1764510000000,
  ItemStore1764600000000,
  DesirabilityPublications1764710000000,
  NetworkDesirabilities1764720000000,
  UnknownStake1764731000000,
  TaskCollectionPaging1764740000000,
  TaskFailureReasons1764750000000,
  LargestBucketPerHour1764752000000,
  IndexMissedSyncs1764760000000,
  TaskCollectionFailures1764770000000,
  ParquetTextStatistics1764780000000,
  TaskCompletedAtIndex1764790000000,
  ParquetVersion1764800000000,
  ParquetVersionGuard1764810000000,
  LabelTaskIndex1764820000000,
  TaskCompileFailures1764830000000,
  MinerFailingUntil1764840000000,
  MetagraphStateNetuid1764850000000,
  MetagraphBlockAdvancedAt1764860000000,
  MetagraphStateGenesis1764920000000,
  ParquetWrittenAt1764930000000,
  JobRunsCountedAt1764940000000,
  PublicationTarget1764941000000,
  AggregatesVersionId1764950000000,
  StoredXItemSeconds1764960000000,
  TaskItemsOrderIndex1764970000000,
  TaskListOrderIndexes1764980000000,
  LabelIdsCycle1764990000000,
  StoredItemsLabelKey1765000000000,
  DatasetWrittenAt1765010000000,
  JobStatusCheckAndColumnTypes1765020000000,
  ErasedAuthors1765030000000,
];

/**
 * The one place that describes how we talk to Postgres, shared by the app, the TypeORM CLI
 * (ormconfig.ts) and the test setup. Migrations are explicit; `synchronize` stays off.
 * No entities here: a module that maps a table to an entity registers it (TypeOrmModule.forFeature,
 * loaded by the app's `autoLoadEntities`), and the migrations are plain SQL, which need none.
 */
export function buildDataSourceOptions(
  url: string,
  tuning?: Partial<DatabaseTuning>,
  applicationName = 'validator-gateway',
  /** Further settings of each connection's session (lock_timeout for migrating). */
  session: SessionSettings = {},
): DataSourceOptions {
  return {
    type: 'postgres',
    url: explicitTlsMode(url),
    migrations: MIGRATIONS,
    migrationsTableName: 'migrations',
    synchronize: false,
    migrationsRun: false,
    // Failed queries surface as exceptions, logged by whoever handles them (as JSON via pino).
    logging: false,
    extra: {
      max: tuning?.poolSize ?? DEFAULT_DATABASE_TUNING.poolSize,
      ...connectionBounds(tuning, session),
      application_name: applicationName,
    },
  };
}

/**
 * The health check's own connection, beside the pool: whether Postgres answers, not whether this
 * replica's pool has a free connection. A pool held by slow work (a burst, a long compile) would
 * otherwise make health a 503 on every replica at once, and a balancer or a Kubernetes probe
 * would take them all out (or restart them) for being busy. The pool's bounds, kept open
 * between polls, and one more: a query timer. The pool has none (docs/decisions.md, "Outages"),
 * but this connection only ever runs `SELECT 1`, and one query that never gets its answer (a
 * server gone silent after a failover, a frozen one) would otherwise hold the only connection:
 * health a 503 while the pool serves, and a shutdown waiting on it for good. When the timer
 * fires, pg-pool drops the connection and the next check opens another.
 */
export function buildProbePoolConfig(url: string, tuning?: Partial<DatabaseTuning>): PoolConfig {
  return {
    connectionString: explicitTlsMode(url),
    max: 1,
    ...connectionBounds(tuning),
    application_name: 'validator-gateway health',
    idleTimeoutMillis: 0,
    query_timeout: PROBE_QUERY_TIMEOUT_MS,
  };
}

/** Above health's 1 s check, so that a slow but live server keeps its connection. */
export const PROBE_QUERY_TIMEOUT_MS = 3000;

/** Every wait on Postgres is bounded, so that an outage is a quick 503, never a hang: */
function connectionBounds(
  tuning: Partial<DatabaseTuning> | undefined,
  session: SessionSettings = {},
) {
  const settings: SessionSettings = {
    ...SESSION_DEFAULTS,
    // one statement, enforced by the server;
    statement_timeout: tuning?.statementTimeoutMs ?? DEFAULT_DATABASE_TUNING.statementTimeoutMs,
    // a transaction left open by a stuck client, so it cannot hold locks for long;
    idle_in_transaction_session_timeout: 60000,
    ...session,
  };
  return {
    // connecting, and waiting for a free pooled connection (pg-pool uses it for both);
    connectionTimeoutMillis: tuning?.connectTimeoutMs ?? DEFAULT_DATABASE_TUNING.connectTimeoutMs,
    // and a server that vanished without closing the socket (no RST): TCP keepalive finds the
    // dead connection instead of waiting on it for the OS default of hours.
    keepAlive: true,
    keepAliveInitialDelayMillis: 10000,
    application_name: 'validator-gateway',
    onConnect: (client: ClientBase) => prepareSession(client, settings),
  };
}

/** Settings of a connection's session, by their Postgres names. */
export type SessionSettings = Record<string, string | number>;

/**
 * What every session is set to, whatever the server, the database or the role set by default
 * (a hosted-Postgres audit set each): the code and node-postgres are written for these.
 * - `DateStyle`: node-postgres parses timestamps only in ISO. Under `SQL, DMY` every timestamp
 *   read back was null: a key was created and its answer was a 500, its secret never shown.
 * - `IntervalStyle`: node-postgres parses intervals only in the `postgres` style.
 * - `TimeZone`: `date_trunc` and `::date` of a timestamptz follow it, and our hours are UTC's.
 * - `extra_float_digits`: floats read back exact (the shortest exact form, Postgres 12 on).
 * - `default_transaction_isolation`: the transactions are written for read committed (the few
 *   that need a snapshot ask for REPEATABLE READ). Under a `serializable` default, 36 of 40
 *   concurrent desirability writes were 500s (40001), and 3 of 4 miners' indexes not stored.
 */
const SESSION_DEFAULTS: SessionSettings = {
  DateStyle: 'ISO, MDY',
  IntervalStyle: 'postgres',
  TimeZone: 'UTC',
  extra_float_digits: 1,
  default_transaction_isolation: 'read committed',
};

/**
 * Sets a new connection's session before pg-pool hands it out. By `set_config` rather than as
 * startup parameters: PgBouncer refuses a connection that starts with one it does not know
 * (`lock_timeout`, `statement_timeout`…), and its usual remedy, `ignore_startup_parameters`,
 * drops them unsaid: the statement timeout was gone, and a request waited 21 s on a lock
 * instead of its 15 s 503. A setting applies to the session, the pooler's server connection in
 * session mode (README, "Scaling out").
 */
async function prepareSession(client: ClientBase, settings: SessionSettings): Promise<void> {
  listenForErrors(client);
  const names = Object.keys(settings);
  await client.query(
    `SELECT ${names.map((_, i) => `set_config($${2 * i + 1}, $${2 * i + 2}, false)`).join(', ')}`,
    names.flatMap((name) => [name, String(settings[name])]),
  );
}

/**
 * How long a migration waits for each lock it takes before it gives up, to try again later: a
 * statement waiting for a lock puts every later one on that table in the queue behind it.
 * Behind a client's 45 s transaction, an ALTER TABLE held every replica's queries on
 * stored_items, and then their pools, for 45 s: 503s on endpoints that never read that table (a
 * rolling-upgrade audit). It bounds each wait, not the migration: queries on a table it altered
 * still wait for its transaction to end, as long as the migration runs.
 */
export const MIGRATION_LOCK_TIMEOUT_MS = 2000;

/**
 * The migrating connections' `application_name`: a migration waiting on a lock is found by it
 * (migration-lock.ts, watchMigrating), and an operator tells it from the service's own sessions.
 */
export const MIGRATING_APPLICATION_NAME = 'validator-gateway migrations';

/**
 * For migrating, whether at start-up (bootstrap.ts), from the command line (migrate-command.ts,
 * ormconfig.ts) or in the test setup: two connections, one holding the migration lock while the
 * other migrates, and no statement timeout. Waiting for the lock while another replica
 * migrates, or a migration that moves a large table (ItemStore), may take longer than any answer
 * should, and a migration cut off by a timeout fails the start or the upgrade. The other bounds
 * (connecting, keepalive, the error listener) stay.
 */
export function buildMigrationDataSourceOptions(
  url: string,
  connectTimeoutMs?: number,
  giveWay = false,
): DataSourceOptions {
  return buildDataSourceOptions(
    url,
    { poolSize: 2, statementTimeoutMs: 0, connectTimeoutMs },
    MIGRATING_APPLICATION_NAME,
    // `giveWay`: a wait for a table's lock ends after MIGRATION_LOCK_TIMEOUT_MS, for migrating
    // (migrateDatabase tries again). Not for the TypeORM CLI's revert, which would fail instead.
    giveWay ? { lock_timeout: MIGRATION_LOCK_TIMEOUT_MS } : {},
  );
}

/**
 * Gives every pooled connection an 'error' listener for its whole life. pg-pool listens while a
 * connection is idle and TypeORM while a query runner holds it, but pg-pool hands a new
 * connection out (and stops listening) inside the very socket read that completed it, and
 * TypeORM starts listening a microtask later. When that read also brings Postgres's
 * "terminating connection" (57P01: a restart or failover just as the connection completes), the
 * 'error' event finds nobody, and an unheard 'error' throws: the process would end (seen once in
 * postgres-outage.e2e-spec on CI; test/medium/pool-errors.medium-spec.ts shows the moment). With
 * the hook, pg-pool also hands the connection out a microtask later. The connection is still
 * dropped: its next query fails (a 503, as anywhere in an outage), and pg-pool discards a
 * connection that can no longer be queried when it is released.
 */
function listenForErrors(client: ClientBase): void {
  client.on('error', () => undefined);
}

import { DataSource } from 'typeorm';
import { isLockTimeout } from './lock-timeout';
import { buildMigrationDataSourceOptions, MIGRATION_LOCK_TIMEOUT_MS } from './data-source-options';
import { checkDatabaseEncoding } from './database-encoding';
import { checkPostgresVersion } from './postgres-version';
import { checkRuntimePrivileges } from './runtime-privileges';
import { MigrationProgress, pauseUnlessEnded, underMigrationLock } from './migration-lock';

/** The first wait before a migration that gave up on a lock is tried again; doubled each time. */
const LOCK_RETRY_FIRST_MS = 1000;
const LOCK_RETRY_MAX_MS = 30_000;

/** What migrating did: the migrations applied now, and those recorded that this release lacks. */
export interface MigrationReport {
  applied: string[];
  /** Run by a newer release: this one is running on a schema it was not written for. */
  unknown: string[];
  /** The server does not vacuum on its own (`SHOW autovacuum` is off); false when unknown. */
  autovacuumOff?: boolean;
}

/**
 * Brings the database at `url` up to date on a connection of its own (no statement timeout:
 * buildMigrationDataSourceOptions), under the migration lock, once its server is known to be
 * recent enough (checkPostgresVersion) and its database in UTF8 (checkDatabaseEncoding); then
 * refuses a role that could not run the service (checkRuntimePrivileges). The one way the
 * schema is migrated: at start-up, from the command line and in the test setup.
 */
export async function migrateDatabase(
  url: string,
  connectTimeoutMs?: number,
  progress?: MigrationProgress,
): Promise<MigrationReport> {
  const dataSource = new DataSource(buildMigrationDataSourceOptions(url, connectTimeoutMs, true));
  await dataSource.initialize();
  try {
    // A server too old, or a database that cannot hold every script, is refused before the
    // lock, not half-way through the migrations or at the first emoji.
    await checkPostgresVersion((sql) => dataSource.query(sql));
    await checkDatabaseEncoding((sql) => dataSource.query(sql));
    const applied = await runMigrations(dataSource, progress);
    await checkRuntimePrivileges((sql, parameters) => dataSource.query(sql, parameters));
    const known = new Set(dataSource.migrations.map((migration) => migration.name));
    const unknown = (await recordedMigrations(dataSource, progress)).filter(
      (name) => !known.has(name),
    );
    const [{ autovacuum }] = await dataSource.query<{ autovacuum: string }[]>('SHOW autovacuum');
    return { applied, unknown, autovacuumOff: autovacuum !== 'on' };
  } finally {
    await dataSource.destroy();
  }
}

/**
 * What an operator reads of migrating, one line each: `warn` for a schema newer than this
 * release, `vacuum` for a server that does not vacuum on its own.
 */
export function describeMigrations(report: MigrationReport): {
  log?: string;
  warn?: string;
  vacuum?: string;
} {
  return {
    // Every index sync rewrites each miner's hour totals: without autovacuum their dead rows
    // grow the database for good, and nothing in the service showed it (a soak audit's finding:
    // 12 → 42 MB in 40 minutes of syncs every two minutes).
    ...(report.autovacuumOff
      ? {
          vacuum:
            "the database server's autovacuum is off: every index sync rewrites the miners' " +
            'hour totals, and their dead rows grow the database until it is vacuumed. Turn ' +
            'autovacuum on (README, "Quick start"), or VACUUM the database regularly',
        }
      : {}),
    ...(report.applied.length > 0
      ? { log: `migrations applied: ${report.applied.join(', ')}` }
      : {}),
    ...(report.unknown.length > 0
      ? {
          warn:
            `the database has migrations this release does not know (${report.unknown.join(', ')}): ` +
            'a newer release ran them. Running an older release on a newer schema is not supported ' +
            'beyond a rolling upgrade; to go back, revert them with the newer release ' +
            '(npm run migration:revert, once per migration) first (README, "Upgrading")',
        }
      : {}),
  };
}

/**
 * Runs pending migrations under a session-level advisory lock: replicas starting together
 * wait for the first one instead of racing to create the same tables.
 */
export function runMigrations(
  dataSource: DataSource,
  progress?: MigrationProgress,
): Promise<string[]> {
  return underMigrationLock(dataSource, progress, () => migrateGivingWay(dataSource, progress));
}

/**
 * Undoes the last migration applied to the database at `url` (`npm run migration:revert`), under
 * the migration lock: without it a revert ran beside a replica that was migrating (a CLI audit).
 * Its statements wait for their locks as long as they take (no giving way: an operator is
 * watching, and a revert that failed half-way would be one more thing to undo). The name of the
 * migration undone; undefined when none was applied.
 */
export async function revertLastMigration(
  url: string,
  connectTimeoutMs?: number,
  progress?: MigrationProgress,
): Promise<string | undefined> {
  const dataSource = new DataSource(buildMigrationDataSourceOptions(url, connectTimeoutMs));
  await dataSource.initialize();
  try {
    return await underMigrationLock(dataSource, progress, async () => {
      const before = await recordedMigrations(dataSource, progress);
      if (before.length === 0) return undefined;
      await dataSource.undoLastMigration({ transaction: 'each' });
      const after = await recordedMigrations(dataSource, progress);
      return before.find((name) => !after.includes(name));
    });
  } finally {
    await dataSource.destroy();
  }
}

/**
 * Runs the pending migrations, each in its transaction; one whose statement could not take a
 * table's lock within MIGRATION_LOCK_TIMEOUT_MS is rolled back and tried again after a pause (1 s,
 * doubling to 30 s), until it runs. The migrations applied before it stay applied. A shutdown
 * signal during a pause (MigrationProgress.onWait) ends it with LockWaitEnded.
 */
async function migrateGivingWay(
  dataSource: DataSource,
  progress?: MigrationProgress,
): Promise<string[]> {
  const before = await recordedMigrations(dataSource, progress);
  await givingWay(
    () => dataSource.runMigrations({ transaction: 'each' }),
    (pause) =>
      `a migration waited ${MIGRATION_LOCK_TIMEOUT_MS / 1000} s for a table's lock (a long ` +
      'transaction of another client, or a replica of an older release, holds it) and gave ' +
      `way, so that the service's queries do not queue behind it; trying again in ${pause}`,
    progress,
  );
  const after = await recordedMigrations(dataSource, progress);
  return after.filter((name) => !before.includes(name));
}

/**
 * `work`, tried again after a pause (1 s, doubling to 30 s) for as long as it fails for a lock
 * it could not take within MIGRATION_LOCK_TIMEOUT_MS, each time said (`gaveWay`, given the
 * pause). A shutdown signal during a pause ends it with LockWaitEnded.
 */
async function givingWay<T>(
  work: () => Promise<T>,
  gaveWay: (pause: string) => string,
  progress?: MigrationProgress,
): Promise<T> {
  for (let pauseMs = LOCK_RETRY_FIRST_MS; ; pauseMs = Math.min(pauseMs * 2, LOCK_RETRY_MAX_MS)) {
    try {
      return await work();
    } catch (error) {
      if (!isLockTimeout(error)) throw error;
      progress?.report(gaveWay(`${pauseMs / 1000} s`));
      await pauseUnlessEnded(pauseMs, progress);
    }
  }
}

/**
 * The names the migrations table records, in the order they ran (none before the first run).
 * Read giving way as the migrations do: a client holding the table (`LOCK TABLE`, a `VACUUM
 * FULL`) failed the start, stack and all (a cold-start audit).
 */
async function recordedMigrations(
  dataSource: DataSource,
  progress?: MigrationProgress,
): Promise<string[]> {
  const [table] = await dataSource.query<{ exists: boolean }[]>(
    `SELECT to_regclass('migrations') IS NOT NULL AS exists`,
  );
  if (!table.exists) return [];
  const rows = await givingWay(
    () => dataSource.query<{ name: string }[]>('SELECT name FROM migrations ORDER BY id'),
    (pause) =>
      `reading the migrations table waited ${MIGRATION_LOCK_TIMEOUT_MS / 1000} s for its lock ` +
      `(another client holds the table) and gave way; trying again in ${pause}`,
    progress,
  );
  return rows.map((row) => row.name);
}

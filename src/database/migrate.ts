import { setTimeout as sleep } from 'node:timers/promises';
import { DataSource, QueryRunner } from 'typeorm';
import { isLockTimeout } from './lock-timeout';
import { buildMigrationDataSourceOptions, MIGRATION_LOCK_TIMEOUT_MS } from './data-source-options';
import { checkDatabaseEncoding } from './database-encoding';
import { checkPostgresVersion } from './postgres-version';
import { checkRuntimePrivileges } from './runtime-privileges';

/** Arbitrary constant shared by every replica so that only one of them migrates at a time. */
export const MIGRATION_LOCK_ID = 7_013_000_001;

/** How often a replica waiting for the migration lock says again that it still waits. */
export const LOCK_WAIT_REPORT_MS = 30_000;

/**
 * Where migrating tells of its wait for the migration lock (start-up: the process log; the
 * command line: stderr). Without it, the wait is silent (the test setup, the benchmarks).
 */
export interface MigrationProgress {
  report(line: string): void;
  /** LOCK_WAIT_REPORT_MS unless said (tests). */
  reportEveryMs?: number;
  /**
   * Called as a wait begins (for the migration lock, or before a migration that gave way is
   * tried again), with the function that ends it (start-up: on a shutdown signal); migrating
   * then fails with LockWaitEnded, what was applied before the wait staying applied (nothing,
   * for the migration lock). What it returns is called once the wait is over, however it ended.
   */
  onWait?(end: (reason: string) => void): () => void;
}

/**
 * A wait ended by the caller (MigrationProgress.onWait): for the migration lock (nothing was
 * migrated), or before a migration that gave way was tried again (those before it stay applied).
 */
export class LockWaitEnded extends Error {
  constructor(
    readonly reason: string,
    during = 'while waiting for the migration lock: stopped, nothing migrated',
  ) {
    super(`${reason} ${during}`);
    this.name = 'LockWaitEnded';
  }
}

/** The first wait before a migration that gave up on a lock is tried again; doubled each time. */
const LOCK_RETRY_FIRST_MS = 1000;
const LOCK_RETRY_MAX_MS = 30_000;

/** How often an ended wait is cancelled again until it gives up (a cancel can come first). */
const CANCEL_AGAIN_MS = 200;

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

/** `work` on the pool's other connection while this one holds the migration lock. */
async function underMigrationLock<T>(
  dataSource: DataSource,
  progress: MigrationProgress | undefined,
  work: () => Promise<T>,
): Promise<T> {
  const runner = dataSource.createQueryRunner();
  await runner.connect();
  const [{ lock_timeout: lockTimeout }] = (await runner
    .query('SHOW lock_timeout')
    .catch(async (error: unknown) => {
      await runner.release();
      throw error;
    })) as { lock_timeout: string }[];
  try {
    // The migration lock is waited for as long as a replica migrates (an advisory lock counts
    // for lock_timeout too); the migrations' own statements are the ones bounded.
    await runner.query('SET lock_timeout = 0');
    await takeMigrationLock(runner, progress);
    const stopWatching = watchMigrating(runner, progress);
    try {
      return await work();
    } finally {
      stopWatching();
    }
  } finally {
    await runner.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_ID]).catch(() => undefined);
    // The pooled connection goes back as it came (runMigrations takes any DataSource): set
    // again, as RESET would go back past the session's own setting (data-source-options.ts).
    await runner
      .query("SELECT set_config('lock_timeout', $1, false)", [lockTimeout])
      .catch(() => undefined);
    await runner.release();
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

async function pauseUnlessEnded(ms: number, progress?: MigrationProgress): Promise<void> {
  let ended: string | undefined;
  const woken = new AbortController();
  const pauseIsOver = progress?.onWait?.((reason) => {
    ended ??= reason;
    woken.abort();
  });
  try {
    // Ended early, the pause rejects (AbortError): `ended` says why, below.
    await sleep(ms, undefined, { signal: woken.signal }).catch(() => undefined);
  } finally {
    pauseIsOver?.();
  }
  if (ended !== undefined)
    throw new LockWaitEnded(
      ended,
      'while waiting to try a migration again: stopped, the migrations before it applied',
    );
}

/**
 * Takes the migration lock, saying so when another session holds it: a replica starting during a
 * long migration (ItemStore moves a whole table) otherwise waited without a word, and looked hung.
 * One line when the wait begins, one every LOCK_WAIT_REPORT_MS while it lasts, one when the lock
 * is taken; none when it was free (docs/decisions.md, "Start-up").
 */
async function takeMigrationLock(runner: QueryRunner, progress?: MigrationProgress): Promise<void> {
  const [free] = (await runner.query('SELECT pg_try_advisory_lock($1) AS locked', [
    MIGRATION_LOCK_ID,
  ])) as { locked: boolean }[];
  if (free.locked) return;
  // The session to cancel if the wait is ended (onWait).
  const [{ pid }] = (await runner.query('SELECT pg_backend_pid() AS pid')) as { pid: number }[];
  const report = progress?.report ?? (() => undefined);
  const started = Date.now();
  const waited = () => `${Math.round((Date.now() - started) / 1000)} s`;
  report(
    'waiting for the migration lock held by another replica (or npm run migration:run); ' +
      'going on once it is released',
  );
  const reminder = setInterval(
    () => report(`still waiting for the migration lock held by another replica (${waited()})`),
    progress?.reportEveryMs ?? LOCK_WAIT_REPORT_MS,
  );
  let ended: string | undefined;
  const locking = runner.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_ID]);
  const over = locking.then(
    () => undefined,
    () => undefined,
  );
  const waitIsOver = progress?.onWait?.((reason) => {
    if (ended !== undefined) return;
    ended = reason;
    void cancelUntilOver(runner.connection, pid, over);
  });
  try {
    await locking;
  } catch (error) {
    // The query cancelled (57014) because the wait was ended: said below.
    if (ended === undefined) throw error;
  } finally {
    clearInterval(reminder);
    waitIsOver?.();
  }
  // Taken as the end came: runMigrations releases it, and nothing is migrated.
  if (ended !== undefined) throw new LockWaitEnded(ended);
  report(`took the migration lock after waiting ${waited()}`);
}

/**
 * While the migrations run (on the pool's other connection), says every reportEveryMs what they
 * wait for when a lock holds them: a client's long transaction on a table a migration alters
 * held the start without a word (a configuration audit's finding: `LOCK TABLE migrations` from
 * another session, 44 s of silence). Asked on the connection holding the migration lock, idle
 * meanwhile; the migrating session is the other one under its `application_name` (this one's:
 * `validator-gateway migrations`, or the one a DATABASE_URL names, which pg lets win; a review's
 * finding), another replica's wait for the migration lock (an advisory lock) left out. Under a
 * name of DATABASE_URL's, the service's own sessions share it: one of theirs waiting behind the
 * migration may be reported in its place.
 */
function watchMigrating(runner: QueryRunner, progress?: MigrationProgress): () => void {
  if (!progress) return () => undefined;
  const started = Date.now();
  let asking = false;
  const timer = setInterval(() => {
    if (asking) return;
    asking = true;
    void describeWait(runner)
      .then((wait) => {
        const seconds = Math.round((Date.now() - started) / 1000);
        if (wait)
          progress.report(
            `migrating has waited ${seconds} s: ${wait}; going on once it is released`,
          );
      })
      .catch(() => undefined)
      .finally(() => (asking = false));
  }, progress.reportEveryMs ?? LOCK_WAIT_REPORT_MS);
  return () => clearInterval(timer);
}

/** What lock the migrating session waits for and who holds it, or undefined when it runs. */
async function describeWait(runner: QueryRunner): Promise<string | undefined> {
  const rows = (await runner.query(
    `SELECT a.pid, l.relation::regclass::text AS relation, pg_blocking_pids(a.pid) AS holders
       FROM pg_stat_activity a
       LEFT JOIN pg_locks l ON l.pid = a.pid AND NOT l.granted
      WHERE a.datname = current_database()
        AND a.application_name = current_setting('application_name')
        AND a.pid <> pg_backend_pid() AND a.wait_event_type = 'Lock' AND a.wait_event <> 'advisory'`,
  )) as { pid: number; relation: string | null; holders: number[] }[];
  const [wait] = rows;
  if (!wait || wait.holders.length === 0) return undefined;
  const what = wait.relation ? `a lock on ${wait.relation}` : 'a lock';
  return (
    `${what}, held by session ${wait.holders.join(', ')} (pg_stat_activity says what it runs; a ` +
    'long transaction of another client, or a replica of an older release)'
  );
}

/**
 * Cancels the waiting query of backend `pid` from another connection of the migration's pool,
 * again every CANCEL_AGAIN_MS until it is over: a cancel that reaches the server before the
 * query does is lost. The session is not just left: Postgres notices a client gone only when it
 * next writes to it, so a backend would stay queued for the lock, and take it, after the
 * process was gone.
 */
async function cancelUntilOver(
  dataSource: DataSource,
  pid: number,
  over: Promise<void>,
): Promise<void> {
  let done = false;
  void over.then(() => (done = true));
  while (!done) {
    await dataSource.query('SELECT pg_cancel_backend($1)', [pid]).catch(() => undefined);
    await Promise.race([over, new Promise((wake) => setTimeout(wake, CANCEL_AGAIN_MS))]);
  }
}

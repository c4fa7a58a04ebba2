import { setTimeout as sleep } from 'node:timers/promises';
import { DataSource, QueryRunner } from 'typeorm';

// The migration lock, and the waits a shutdown signal can end: for the lock, and before a
// migration that gave way is tried again (migrate.ts).

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

/** How often an ended wait is cancelled again until it gives up (a cancel can come first). */
const CANCEL_AGAIN_MS = 200;

/** `work` on the pool's other connection while this one holds the migration lock. */
export async function underMigrationLock<T>(
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

/** Waits `ms`, unless the wait is ended (MigrationProgress.onWait): then LockWaitEnded. */
export async function pauseUnlessEnded(ms: number, progress?: MigrationProgress): Promise<void> {
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

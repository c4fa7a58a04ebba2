import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { createHash } from 'node:crypto';
import type { PoolClient } from 'pg';
import { DataSource, QueryRunner } from 'typeorm';

export type JobRunStatus = 'succeeded' | 'failed';

/** A job's row: its latest run (`running` while one is), and the last one that ended. */
export interface JobRun {
  status: JobRunStatus | 'running' | 'interrupted' | 'idle';
  startedAt: Date | null;
  /** When the last run that ended (succeeded or failed, counted or not) ended. */
  finishedAt: Date | null;
  /** The last ended or interrupted run's result, or `{ error }` for a failed one. */
  details: Record<string, unknown>;
}

/**
 * The `job_runs` table and the Postgres advisory lock that keeps a job to one replica at a time.
 * The lock belongs to a session, so a run's statements all go through one connection of its
 * own: taken by `lock`, given back by `JobLock.release`. That session sits idle while the job
 * runs, so it is exempt from `idle_session_timeout`: a server or provider setting it ended the
 * session mid-run, and with it the lock, and the other replica ran the job at the same time (a
 * races audit). A session-level lock needs a session: a pooler in transaction mode cannot keep
 * one (README, "Scaling out").
 */
@Injectable()
export class JobRunsRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** The job's lock, on a connection of its own; null when another session holds it. */
  async lock(name: string): Promise<JobLock | null> {
    const runner = this.dataSource.createQueryRunner();
    const connection = (await runner.connect()) as PoolClient;
    const lockId = lockIdOf(name);
    let locked = false;
    try {
      await runner.query('SET idle_session_timeout = 0');
      const [row] = (await runner.query('SELECT pg_try_advisory_lock($1) AS locked', [lockId])) as {
        locked: boolean;
      }[];
      locked = row.locked;
    } finally {
      if (!locked) await runner.release();
    }
    return locked ? new JobLock(runner, connection, this.dataSource, name, lockId) : null;
  }

  async findRun(name: string): Promise<JobRun | undefined> {
    const [row] = await this.dataSource.query<JobRun[]>(
      `SELECT status, started_at AS "startedAt", finished_at AS "finishedAt", details
       FROM job_runs WHERE name = $1`,
      [name],
    );
    return row;
  }
}

/**
 * A job's advisory lock, held: its run is recorded through the connection that holds it, or,
 * once that connection closed (Postgres restarted, the session was ended, the network dropped
 * it), through the pool: the lock went with the session, but the run's end is still its to
 * record. Left `running`, the row kept the job due, and replicas ran it back to back. Its end
 * is recorded only while the row is still this run's (its `started_at`): once the lock is gone,
 * another replica may have started the job, and its row is not ours to end.
 */
export class JobLock {
  private ended = false;
  /** The run's `started_at` as Postgres wrote it (text: microseconds), once started. */
  private startedAt: string | null = null;
  private lost: () => void = () => undefined;
  private readonly onEnd = () => {
    this.ended = true;
    this.lost();
  };

  constructor(
    private readonly runner: QueryRunner,
    private readonly connection: PoolClient,
    private readonly dataSource: DataSource,
    private readonly name: string,
    private readonly lockId: string,
  ) {
    connection.once('end', this.onEnd);
  }

  /** Calls `listener` when the lock's connection closes while the lock is held: it is lost. */
  onLost(listener: () => void): void {
    this.lost = listener;
  }

  /**
   * Closed: ended, or released by typeorm, which releases a runner at its connection's 'error',
   * a turn of the loop before 'end' (a review).
   */
  private get closed(): boolean {
    return this.ended || this.runner.isReleased;
  }

  /** The lock's connection while it is open, else the pool. */
  private query(text: string, parameters: unknown[]): Promise<unknown> {
    return this.closed
      ? this.dataSource.query(text, parameters)
      : this.runner.query(text, parameters);
  }

  /**
   * Records a run as started unless the last run that counts (`counted_at`, its start) started
   * less than `minGapMs` ago (another replica ran it in this interval); otherwise says how long
   * ago it started. The gap is counted from the last counted run's start, as the ticks are:
   * counted from its end, a run longer than the interval's slack left the next tick not due, and
   * the job ran every other tick. A run that did not end (cut short by shutdown, or its replica
   * gone) or that did not count (JobRunner's `counts`) leaves `counted_at` as it was: the job
   * stays due for the next replica. A `counted_at` after Postgres' `now()` (its clock set back
   * since) is no reading of an interval: the job is due. Read as negative, it held every job
   * back for as long as the step (an accelerated-time audit: an hour without collections).
   */
  async startIfDue(
    minGapMs: number,
  ): Promise<{ started: true } | { started: false; countedAgoMs: number }> {
    const [{ countedAgoMs }] = (await this.runner.query(
      `INSERT INTO job_runs (name) VALUES ($1) ON CONFLICT (name) DO UPDATE SET name = EXCLUDED.name
       RETURNING CASE WHEN counted_at <= now()
         THEN extract(epoch FROM now() - counted_at)::float8 * 1000 END AS "countedAgoMs"`,
      [this.name],
    )) as { countedAgoMs: number | null }[];
    if (countedAgoMs !== null && countedAgoMs < minGapMs) return { started: false, countedAgoMs };
    // typeorm answers an UPDATE as [rows, count].
    const [[{ startedAt }]] = (await this.runner.query(
      `UPDATE job_runs SET started_at = now(), status = 'running' WHERE name = $1
       RETURNING started_at::text AS "startedAt"`,
      [this.name],
    )) as [{ startedAt: string }[], number];
    this.startedAt = startedAt;
    return { started: true };
  }

  /** Records the run's end; one that `counts` holds the job back for an interval from its start. */
  async finish(status: JobRunStatus, details: unknown, counts = true): Promise<void> {
    await this.query(
      `UPDATE job_runs SET finished_at = now(), status = $2, details = $3,
         counted_at = CASE WHEN $4::boolean THEN started_at ELSE counted_at END
       WHERE name = $1 AND started_at = $5::timestamptz`,
      [this.name, status, JSON.stringify(details), counts, this.startedAt],
    );
  }

  /**
   * Records a run cut short by shutdown: `counted_at` stays the last counted run's, so the job
   * is as due as it was when this run started (startIfDue), and `finished_at` the last ended
   * run's.
   */
  async interrupt(details: unknown): Promise<void> {
    await this.query(
      `UPDATE job_runs SET status = 'interrupted', details = $2
       WHERE name = $1 AND started_at = $3::timestamptz`,
      [this.name, JSON.stringify(details), this.startedAt],
    );
  }

  /**
   * Unlocks the job and gives the connection back to the pool. When the unlock fails (a
   * statement timeout under load, say) on a connection that lives on, its session may still
   * hold the lock, and the pool keeps idle connections for good: every replica would find the
   * job locked from then on. The connection is closed instead, and its session's locks go with
   * it (the pool drops a closed connection when it is given back). A connection already closed
   * took its lock with it: nothing to unlock (the loss was told to `onLost`).
   *
   * Returns false when the session answered that it did not hold the lock: the connection stayed
   * open but its session changed under it, which a pooler in transaction mode does (a
   * hosted-Postgres audit: PgBouncer left a pooled session holding the job locks for good, and
   * gave the other replicas a session without them).
   */
  async release(): Promise<boolean> {
    this.connection.off('end', this.onEnd);
    if (this.closed) {
      await this.runner.release();
      return true;
    }
    try {
      const [row] = (await this.runner.query('SELECT pg_advisory_unlock($1) AS unlocked', [
        this.lockId,
      ])) as { unlocked: boolean }[];
      return row.unlocked;
    } catch (error) {
      await this.connection.end().catch(() => undefined);
      throw error;
    } finally {
      await this.runner.release();
    }
  }
}

/** A stable 63-bit lock id per job name. */
function lockIdOf(name: string): string {
  return BigInt.asIntN(
    64,
    BigInt(`0x${createHash('sha256').update(`job:${name}`).digest('hex').slice(0, 16)}`),
  ).toString();
}

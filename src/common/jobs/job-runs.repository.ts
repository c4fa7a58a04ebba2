import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { createHash } from 'node:crypto';
import type { PoolClient } from 'pg';
import { DataSource, QueryRunner } from 'typeorm';

export type JobRunStatus = 'succeeded' | 'failed';

/**
 * The `job_runs` table and the Postgres advisory lock that keeps a job to one replica at a time.
 * The lock belongs to a session, so a run's statements all go through one connection of its
 * own: taken by `lock`, given back by `JobLock.release`.
 */
@Injectable()
export class JobRunsRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** The job's lock, on a connection of its own; null when another session holds it. */
  async lock(name: string): Promise<JobLock | null> {
    const runner = this.dataSource.createQueryRunner();
    await runner.connect();
    const lockId = lockIdOf(name);
    let locked = false;
    try {
      const [row] = (await runner.query('SELECT pg_try_advisory_lock($1) AS locked', [lockId])) as {
        locked: boolean;
      }[];
      locked = row.locked;
    } finally {
      if (!locked) await runner.release();
    }
    return locked ? new JobLock(runner, name, lockId) : null;
  }
}

/** A job's advisory lock, held: its run is recorded through the connection that holds it. */
export class JobLock {
  constructor(
    private readonly runner: QueryRunner,
    private readonly name: string,
    private readonly lockId: string,
  ) {}

  /**
   * Records a run as started unless the last one started less than `minGapMs` ago (another
   * replica ran it in this interval); returns whether it was. The gap is counted from the last
   * run's start, as the ticks are: counted from its end, a run longer than the interval's slack
   * left the next tick not due, and the job ran every other tick. A run that did not end (cut
   * short by shutdown, or its replica gone) left `started_at` its own and `finished_at` the last
   * finished run's, which is the one counted then: the job stays due for the next replica.
   */
  async startIfDue(minGapMs: number): Promise<boolean> {
    const [{ due }] = (await this.runner.query(
      `INSERT INTO job_runs (name) VALUES ($1) ON CONFLICT (name) DO UPDATE SET name = EXCLUDED.name
       RETURNING coalesce(
         CASE WHEN status IN ('succeeded', 'failed') THEN started_at ELSE finished_at END
           < now() - make_interval(secs => $2 / 1000.0),
         true
       ) AS due`,
      [this.name, minGapMs],
    )) as { due: boolean }[];
    if (!due) return false;
    await this.runner.query(
      `UPDATE job_runs SET started_at = now(), status = 'running' WHERE name = $1`,
      [this.name],
    );
    return true;
  }

  async finish(status: JobRunStatus, details: unknown): Promise<void> {
    await this.runner.query(
      `UPDATE job_runs SET finished_at = now(), status = $2, details = $3 WHERE name = $1`,
      [this.name, status, JSON.stringify(details)],
    );
  }

  /**
   * Records a run cut short by shutdown: `finished_at` stays the last finished run's, so the job
   * is due again once that run ended the interval's share ago (startIfDue), as it was when this
   * run started unless that run was a long one.
   */
  async interrupt(details: unknown): Promise<void> {
    await this.runner.query(
      `UPDATE job_runs SET status = 'interrupted', details = $2 WHERE name = $1`,
      [this.name, JSON.stringify(details)],
    );
  }

  /**
   * Unlocks the job and gives the connection back to the pool. When the unlock fails (a
   * statement timeout under load, say) on a connection that lives on, its session may still
   * hold the lock, and the pool keeps idle connections for good: every replica would find the
   * job locked from then on. The connection is closed instead, and its session's locks go with
   * it (the pool drops a closed connection when it is given back).
   */
  async release(): Promise<void> {
    try {
      await this.runner.query('SELECT pg_advisory_unlock($1)', [this.lockId]);
    } catch (error) {
      const connection = (await this.runner.connect()) as PoolClient;
      await connection.end().catch(() => undefined);
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

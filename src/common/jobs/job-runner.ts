import { Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { createHash } from 'node:crypto';
import { DataSource } from 'typeorm';

export interface JobOutcome<T> {
  ran: boolean;
  /** Why it did not run: another replica holds it, or it ran recently enough. */
  skipped?: 'locked' | 'not_due';
  result?: T;
}

/**
 * Runs background jobs once across replicas: a Postgres advisory lock (held on one connection
 * for the run) keeps two replicas from running a job at the same time, and the `job_runs` row
 * keeps a replica that wakes up later in the same interval from running it again.
 */
@Injectable()
export class JobRunner {
  private readonly logger = new Logger(JobRunner.name);

  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  async runOnce<T>(
    name: string,
    intervalMs: number,
    run: () => Promise<T>,
  ): Promise<JobOutcome<T>> {
    const runner = this.dataSource.createQueryRunner();
    await runner.connect();
    const lockId = lockIdOf(name);
    try {
      const [{ locked }] = (await runner.query('SELECT pg_try_advisory_lock($1) AS locked', [
        lockId,
      ])) as { locked: boolean }[];
      if (!locked) return { ran: false, skipped: 'locked' };
      try {
        const [due] = (await runner.query(
          `INSERT INTO job_runs (name) VALUES ($1) ON CONFLICT (name) DO UPDATE SET name = EXCLUDED.name
           RETURNING finished_at IS NULL OR finished_at < now() - make_interval(secs => $2 / 1000.0) AS due`,
          [name, intervalMs * 0.9],
        )) as { due: boolean }[];
        if (!due.due) return { ran: false, skipped: 'not_due' };
        await runner.query(
          `UPDATE job_runs SET started_at = now(), status = 'running' WHERE name = $1`,
          [name],
        );
        try {
          const result = await run();
          await runner.query(
            `UPDATE job_runs SET finished_at = now(), status = 'succeeded', details = $2 WHERE name = $1`,
            [name, JSON.stringify(result ?? {})],
          );
          return { ran: true, result };
        } catch (error) {
          this.logger.error(`job ${name} failed: ${(error as Error).message}`);
          await runner.query(
            `UPDATE job_runs SET finished_at = now(), status = 'failed', details = $2 WHERE name = $1`,
            [name, JSON.stringify({ error: (error as Error).message })],
          );
          throw error;
        }
      } finally {
        await runner.query('SELECT pg_advisory_unlock($1)', [lockId]);
      }
    } finally {
      await runner.release();
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

import { Injectable, Logger } from '@nestjs/common';
import { JobRunsRepository } from './job-runs.repository';

export interface JobOutcome<T> {
  ran: boolean;
  /** Why it did not run: another replica holds it, or it ran recently enough. */
  skipped?: 'locked' | 'not_due';
  result?: T;
}

/**
 * A run counts for its interval though the next replica's timer fires a little early: a tenth
 * of the interval of slack.
 */
const DUE_AFTER_SHARE = 0.9;

/**
 * Runs background jobs once across replicas: an advisory lock (held on one connection for the
 * run) keeps two replicas from running a job at the same time, and the job's `job_runs` row
 * keeps a replica that wakes up later in the same interval from running it again.
 */
@Injectable()
export class JobRunner {
  private readonly logger = new Logger(JobRunner.name);

  constructor(private readonly jobRuns: JobRunsRepository) {}

  async runOnce<T>(
    name: string,
    intervalMs: number,
    run: () => Promise<T>,
  ): Promise<JobOutcome<T>> {
    const lock = await this.jobRuns.lock(name);
    if (!lock) return { ran: false, skipped: 'locked' };
    try {
      if (!(await lock.startIfDue(intervalMs * DUE_AFTER_SHARE)))
        return { ran: false, skipped: 'not_due' };
      try {
        const result = await run();
        await lock.finish('succeeded', result ?? {});
        return { ran: true, result };
      } catch (error) {
        this.logger.error(`job ${name} failed: ${(error as Error).message}`);
        await lock.finish('failed', { error: (error as Error).message });
        throw error;
      }
    } finally {
      await lock.release();
    }
  }
}

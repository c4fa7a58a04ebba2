import { Injectable, Logger } from '@nestjs/common';
import { JobRunsRepository } from './job-runs.repository';

export interface JobOutcome<T> {
  ran: boolean;
  /** Why it did not run: another replica holds it, or it ran recently enough. */
  skipped?: 'locked' | 'not_due';
  /** It ran, but shutdown cut it short: recorded as `interrupted`, the job left due. */
  interrupted?: true;
  result?: T;
}

/**
 * A run counts for its interval, from its start, though the next replica's timer fires a little
 * early: a tenth of the interval of slack.
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

  /**
   * Runs `run` unless another replica runs it or ran it within the interval. A run that
   * `interrupted()` says shutdown cut short (checked once it ended) keeps the previous run's
   * `finished_at`: it reached only part of its work, and another replica runs the job at its
   * next tick instead of waiting out an interval behind it (a rolling deploy's new replica, at
   * start-up).
   */
  async runOnce<T>(
    name: string,
    intervalMs: number,
    run: () => Promise<T>,
    interrupted: () => boolean = () => false,
  ): Promise<JobOutcome<T>> {
    const lock = await this.jobRuns.lock(name);
    if (!lock) return { ran: false, skipped: 'locked' };
    try {
      if (!(await lock.startIfDue(intervalMs * DUE_AFTER_SHARE)))
        return { ran: false, skipped: 'not_due' };
      try {
        const result = await run();
        if (interrupted()) {
          await lock.interrupt(result ?? {});
          return { ran: true, interrupted: true, result };
        }
        await lock.finish('succeeded', result ?? {});
        return { ran: true, result };
      } catch (error) {
        const details = { error: (error as Error).message };
        if (interrupted()) {
          await lock.interrupt(details);
          throw error;
        }
        this.logger.error(`job ${name} failed: ${details.error}`);
        await lock.finish('failed', details);
        throw error;
      }
    } finally {
      await lock.release();
    }
  }
}

import { Injectable, Logger } from '@nestjs/common';
import { MetricsService } from '../metrics/metrics.service';
import { JobRun, JobRunsRepository } from './job-runs.repository';

export interface JobOutcome<T> {
  ran: boolean;
  /** Why it did not run: another replica holds it, or it ran recently enough. */
  skipped?: 'locked' | 'not_due';
  /** Not due: how long until the last run that counts is an interval old (ms). */
  dueInMs?: number;
  /** It ran, but shutdown cut it short: recorded as `interrupted`, the job left due. */
  interrupted?: true;
  /** It ran, but the job says the run does not count for the interval: the job is left due. */
  uncounted?: true;
  result?: T;
}

/** How a run ended: its result, or the error it threw. */
export type RunEnd<T> = { result: T } | { error: Error };

/**
 * Whether a run that ended counts for the job's interval. One that does not is recorded (its
 * status, details and end) but leaves the job due: what a run that spent nothing worth sparing
 * (no miner's call budget) should not hold back for an interval, as a failed read of the chain.
 */
export type CountsForInterval<T> = (ended: RunEnd<T>) => boolean;

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

  constructor(
    private readonly jobRuns: JobRunsRepository,
    private readonly metrics: MetricsService,
  ) {}

  /** A job this instance schedules: its failures are counted from 0 before any attempt. */
  announce(name: string): void {
    this.metrics.announceJob(name);
  }

  /**
   * Runs `run` unless another replica runs it or ran it within the interval. A run that
   * `interrupted()` says shutdown cut short (checked once it ended) does not count for the
   * interval: it reached only part of its work, and another replica runs the job at its next
   * tick instead of waiting out an interval behind it (a rolling deploy's new replica, at
   * start-up). Nor does one that `counts` says does not. A run skipped as not due says when the
   * interval of the last run that counts ends (`dueInMs`): the time to try again. An attempt
   * that throws is counted in gateway_job_failures_total, as PeriodicJob logs it: `start` before
   * the run began (the lock or the job's row), `run` after; not a run shutdown cut short.
   */
  async runOnce<T>(
    name: string,
    intervalMs: number,
    run: () => Promise<T>,
    interrupted: () => boolean = () => false,
    counts: CountsForInterval<T> = () => true,
  ): Promise<JobOutcome<T>> {
    let started = false;
    const running = () => {
      started = true;
      return run();
    };
    try {
      return await this.lockAndRun(name, intervalMs, running, interrupted, counts);
    } catch (error) {
      if (!started) this.metrics.recordJobFailure(name, 'start');
      else if (!interrupted()) this.metrics.recordJobFailure(name, 'run');
      throw error;
    }
  }

  private async lockAndRun<T>(
    name: string,
    intervalMs: number,
    run: () => Promise<T>,
    interrupted: () => boolean,
    counts: CountsForInterval<T>,
  ): Promise<JobOutcome<T>> {
    const lock = await this.jobRuns.lock(name);
    if (!lock) return { ran: false, skipped: 'locked' };
    lock.onLost(() =>
      this.logger.warn(
        `job ${name} lost its lock: the connection holding it closed; another replica may run ` +
          'the job before this run ends, which goes on and is recorded when it does',
      ),
    );
    try {
      const start = await lock.startIfDue(intervalMs * DUE_AFTER_SHARE);
      if (!start.started)
        return {
          ran: false,
          skipped: 'not_due',
          dueInMs: Math.max(0, intervalMs - start.countedAgoMs),
        };
      try {
        const result = await run();
        if (interrupted()) {
          await lock.interrupt(result ?? {});
          return { ran: true, interrupted: true, result };
        }
        const counted = counts({ result });
        await lock.finish('succeeded', result ?? {}, counted);
        return counted ? { ran: true, result } : { ran: true, uncounted: true, result };
      } catch (error) {
        const details = { error: (error as Error).message };
        if (interrupted()) {
          await lock.interrupt(details);
          throw error;
        }
        this.logger.error(`job ${name} failed: ${details.error}`);
        await lock.finish('failed', details, counts({ error: error as Error }));
        throw error;
      }
    } finally {
      if (!(await lock.release()))
        this.logger.warn(
          `job ${name}: its session no longer held the job's lock at the run's end, although ` +
            'the connection stayed open: a pooler in transaction mode (README, "Scaling out")? ' +
            'Then the lock keeps no other replica from running the job',
        );
    }
  }

  /** The job's `job_runs` row as it is now (undefined: the job never started anywhere). */
  lastRun(name: string): Promise<JobRun | undefined> {
    return this.jobRuns.findRun(name);
  }
}

import { Logger } from '@nestjs/common';
import { FIRST_RETRY_MS, retryDelay } from '../retry-delay';
import { CountsForInterval, JobOutcome, JobRunner } from './job-runner';

/**
 * A background job run every `intervalMs` and at most once per interval across replicas
 * (JobRunner). Each attempt schedules the next: an interval after its start; when the job was
 * not due (another replica ran it, or this one before a restart), once that run's interval
 * ends; after a run that `counts` says does not count, sooner, backing off (5 s, doubling, up to
 * the interval). Ticks that find a run in progress are skipped; `stop` ends the schedule and
 * `settled` waits for a run in progress, for graceful shutdown. A run still going when `stop` is
 * called is recorded as interrupted, which leaves the job due for the other replicas: shutdown
 * is when the jobs' owners give up their work (the miner client aborts its calls), and the odd
 * run that completes all the same costs only an early run elsewhere.
 */
export class PeriodicJob<T> {
  private timer: NodeJS.Timeout | undefined;
  private current: Promise<JobOutcome<T>> | undefined;
  private stopped = false;
  /** Runs in a row here that did not count: the retry's backoff. */
  private uncountedRuns = 0;

  constructor(
    private readonly runner: JobRunner,
    private readonly name: string,
    private readonly intervalMs: number,
    private readonly run: () => Promise<T>,
    private readonly logger: Logger,
    private readonly counts: CountsForInterval<T> = () => true,
  ) {}

  /** Schedules the job; with `firstRunAfter`, also runs it once that settles. */
  start(firstRunAfter?: Promise<unknown>): void {
    this.schedule(this.intervalMs);
    if (firstRunAfter) void firstRunAfter.then(() => this.tick());
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }

  async settled(): Promise<void> {
    await this.current?.catch(() => undefined);
  }

  /** Runs now if no replica ran it within the interval and no run is in progress here. */
  async runIfDue(): Promise<JobOutcome<T>> {
    if (this.current) return { ran: false, skipped: 'locked' };
    this.current = this.runner.runOnce(
      this.name,
      this.intervalMs,
      this.run,
      () => this.stopped,
      this.counts,
    );
    try {
      const outcome = await this.current;
      if (outcome.interrupted)
        this.logger.log(`${this.name}: cut short by shutdown, left due for the other replicas`);
      else if (!outcome.ran)
        this.logger.log(
          `${this.name}: ${outcome.skipped === 'locked' ? 'another replica is running it' : `ran recently, due in ${Math.round((outcome.dueInMs ?? 0) / 1000)} s`}`,
        );
      return outcome;
    } finally {
      this.current = undefined;
    }
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.tick(), delayMs).unref();
  }

  private async tick(): Promise<void> {
    if (this.stopped) return;
    if (this.current) return this.schedule(this.intervalMs);
    const started = Date.now();
    let counted: boolean;
    let dueInMs: number | undefined;
    try {
      const outcome = await this.runIfDue();
      counted = !outcome.uncounted;
      dueInMs = outcome.dueInMs;
    } catch (error) {
      this.logger.error(`${this.name} failed: ${(error as Error).message}`);
      counted = this.counts({ error: error as Error });
    }
    if (!counted) {
      this.schedule(retryDelay(this.uncountedRuns++, FIRST_RETRY_MS, this.intervalMs));
      return;
    }
    this.uncountedRuns = 0;
    this.schedule(dueInMs ?? Math.max(0, started + this.intervalMs - Date.now()));
  }
}

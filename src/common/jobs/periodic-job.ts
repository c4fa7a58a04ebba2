import { Logger } from '@nestjs/common';
import { JobOutcome, JobRunner } from './job-runner';

/**
 * A background job run every `intervalMs` and at most once per interval across replicas
 * (JobRunner). Ticks that find a run in progress are skipped; `stop` ends the schedule and
 * `settled` waits for a run in progress, for graceful shutdown. A run still going when `stop` is
 * called is recorded as interrupted, which leaves the job due for the other replicas: shutdown
 * is when the jobs' owners give up their work (the miner client aborts its calls), and the odd
 * run that completes all the same costs only an early run elsewhere.
 */
export class PeriodicJob<T> {
  private timer: NodeJS.Timeout | undefined;
  private current: Promise<JobOutcome<T>> | undefined;
  private stopped = false;

  constructor(
    private readonly runner: JobRunner,
    private readonly name: string,
    private readonly intervalMs: number,
    private readonly run: () => Promise<T>,
    private readonly logger: Logger,
  ) {}

  /** Schedules the job; with `firstRunAfter`, also runs it once that settles. */
  start(firstRunAfter?: Promise<unknown>): void {
    if (firstRunAfter) void firstRunAfter.then(() => this.tick());
    this.timer = setInterval(() => void this.tick(), this.intervalMs).unref();
  }

  stop(): void {
    this.stopped = true;
    clearInterval(this.timer);
  }

  async settled(): Promise<void> {
    await this.current?.catch(() => undefined);
  }

  /** Runs now if no replica ran it within the interval and no run is in progress here. */
  async runIfDue(): Promise<JobOutcome<T>> {
    if (this.current) return { ran: false, skipped: 'locked' };
    this.current = this.runner.runOnce(this.name, this.intervalMs, this.run, () => this.stopped);
    try {
      const outcome = await this.current;
      if (outcome.interrupted)
        this.logger.log(`${this.name}: cut short by shutdown, left due for the other replicas`);
      else if (!outcome.ran)
        this.logger.log(
          `${this.name}: ${outcome.skipped === 'locked' ? 'another replica is running it' : 'ran recently, not due yet'}`,
        );
      return outcome;
    } finally {
      this.current = undefined;
    }
  }

  private async tick(): Promise<void> {
    if (this.stopped || this.current) return;
    await this.runIfDue().catch((error: Error) =>
      this.logger.error(`${this.name} failed: ${error.message}`),
    );
  }
}

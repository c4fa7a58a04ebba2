import { Logger } from '@nestjs/common';
import { debugEnabled } from '../logging/debug-lines';
import { FailureStreak } from '../logging/failure-streak';
import { plural } from '../plural';
import { FIRST_RETRY_MS, retryDelay } from '../retry-delay';
import { CountsForInterval, JobOutcome, JobRunner } from './job-runner';

/**
 * A background job run every `intervalMs` and at most once per interval across replicas
 * (JobRunner). Each attempt schedules the next: an interval after its start; when the job was
 * not due (another replica ran it, or this one before a restart), once that run's interval
 * ends; after a run that `counts` says does not count, or an attempt that failed before its run
 * started (Postgres away for the lock: nothing was spent), sooner, backing off (5 s, doubling, up
 * to the interval). Ticks that find a run in progress are skipped; `stop` ends the schedule and
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
  /** Attempts in a row that could not start (couldNotStart). */
  private readonly startFailures = new FailureStreak();
  /** Whether the latest attempt got as far as its run (JobRunner takes the lock first). */
  private runStarted = false;

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
    this.runner.announce(this.name);
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
    this.runStarted = false;
    this.current = this.runner.runOnce(
      this.name,
      this.intervalMs,
      () => {
        this.runStarted = true;
        return this.run();
      },
      () => this.stopped,
      this.counts,
    );
    try {
      const outcome = await this.current;
      if (outcome.interrupted)
        this.logger.log(`${this.name}: cut short by shutdown, left due for the other replicas`);
      // At debug: on every replica but the one running it, each tick wrote it at info, a line a
      // minute saying nothing (a log audit's finding).
      else if (!outcome.ran)
        this.logger.debug(
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

  /**
   * The first of attempts in a row that could not start is an error line, and each whose cause
   * differs (FailureStreak); the others are debug lines: with the database away, one every retry
   * (5 s, doubling to the interval) made about 60 of the same error an hour per job.
   * gateway_job_failures_total{stage="start"} still counts each.
   */
  private couldNotStart(error: Error): void {
    const line = `${this.name} could not start: ${error.message}`;
    if (this.startFailures.failed(line)) this.logger.error(line);
    else if (debugEnabled()) this.logger.debug(line);
  }

  /** Its lock and row were read: said once after attempts that could not start. */
  private couldStart(): void {
    const failures = this.startFailures.ended();
    if (failures > 0)
      this.logger.log(
        `${this.name} could start again, after ${plural(failures, 'attempt')} that could not`,
      );
  }

  private async tick(): Promise<void> {
    if (this.stopped) return;
    if (this.current) return this.schedule(this.intervalMs);
    // Monotonic: a wall clock set back during the run would put the next one off by as much
    // (docs/decisions.md, "Clocks").
    const started = performance.now();
    let counted: boolean;
    let dueInMs: number | undefined;
    let startFailed = false;
    try {
      const outcome = await this.runIfDue();
      counted = !outcome.uncounted;
      dueInMs = outcome.dueInMs;
    } catch (error) {
      // One that failed before its run started (the lock or the job's row unreadable) did
      // nothing: it is retried as a run that does not count, whatever the job's rule for runs.
      const started = this.runStarted;
      if (started) this.logger.error(`${this.name} failed: ${(error as Error).message}`);
      else this.couldNotStart(error as Error);
      startFailed = !started;
      counted = started && this.counts({ error: error as Error });
    }
    if (!startFailed) this.couldStart();
    if (!counted) {
      this.schedule(retryDelay(this.uncountedRuns++, FIRST_RETRY_MS, this.intervalMs));
      return;
    }
    this.uncountedRuns = 0;
    this.schedule(dueInMs ?? Math.max(0, this.intervalMs - (performance.now() - started)));
  }
}

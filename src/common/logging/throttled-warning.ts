import { LoggerService } from '@nestjs/common';

/** At most one line per this many ms of a ThrottledWarning's kind. */
export const WARNING_INTERVAL_MS = 10_000;

/** How a ThrottledWarning words its lines, from what each warning is about (its subject). */
export interface ThrottledWording {
  /** The line of one warning. */
  line: (subject: string) => string;
  /** The line for the `count` more held back within `seconds`, naming the last one's subject. */
  summary: (count: number, seconds: number, lastSubject: string) => string;
}

/**
 * A warning anyone can cause, once per request (a refusal before authentication), written as
 * the database outage's is (database-outage-log.ts): the first at once, then at most one line
 * per interval saying how many more there were, with the last of them. A flood of such requests
 * wrote a line each and filled the log. The summary comes on an unref'd timer at the interval's
 * end, so that the count of a burst that stopped is still said; a warning after a quiet interval
 * is written at once again.
 */
export class ThrottledWarning {
  /** When the interval of the last line written ends (monotonic ms); none before the first. */
  private intervalEndsAt: number | undefined;
  private held = 0;
  private lastSubject = '';
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly logger: LoggerService,
    private readonly wording: ThrottledWording,
    private readonly intervalMs = WARNING_INTERVAL_MS,
    private readonly now: () => number = () => performance.now(),
  ) {}

  warn(subject: string): void {
    const now = this.now();
    if (this.intervalEndsAt === undefined || now >= this.intervalEndsAt) {
      this.logger.warn(this.wording.line(subject));
      this.intervalEndsAt = now + this.intervalMs;
      return;
    }
    this.held++;
    this.lastSubject = subject;
    this.timer ??= setTimeout(() => this.summarize(), this.intervalEndsAt - now).unref();
  }

  /** Writes the summary of the warnings held back now, if any (shutdown: its timer is unref'd). */
  flush(): void {
    if (this.held === 0) return;
    clearTimeout(this.timer);
    this.summarize();
  }

  private summarize(): void {
    this.timer = undefined;
    const seconds = Math.round(this.intervalMs / 100) / 10;
    this.logger.warn(
      { count: this.held },
      this.wording.summary(this.held, seconds, this.lastSubject),
    );
    this.held = 0;
    this.intervalEndsAt = this.now() + this.intervalMs;
  }
}

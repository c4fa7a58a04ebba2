/**
 * Failures in a row of work retried on its own (a reload, a job's start), for its log: the first
 * is worth its line, and so is each whose cause differs from the one before (the first line
 * would hide it); the others are not. The first success after says how many there were. A line
 * at every retry repeated itself for as long as the database was away (a log audit).
 */
export class FailureStreak {
  private failures = 0;
  private lastCause = '';

  /** Counts a failure; whether it is worth its line. */
  failed(cause: string): boolean {
    const worth = this.failures++ === 0 || cause !== this.lastCause;
    this.lastCause = cause;
    return worth;
  }

  /** A success: ends the streak, giving how many failures it had (0: none). */
  ended(): number {
    const failures = this.failures;
    this.failures = 0;
    return failures;
  }
}

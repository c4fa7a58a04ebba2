import { Logger } from '@nestjs/common';
import { storage } from 'nestjs-pino/storage';
import { ThrottledWarning } from '../logging/throttled-warning';

export interface WriteBufferOptions<K, V> {
  /** How long the first change waits for others before the batch is written. */
  delayMs: number;
  /**
   * Writes one batch; a failure is logged (as `could not record <what>`, at most one line per
   * 10 s) and the batch dropped.
   */
  write: (batch: ReadonlyMap<K, V>) => Promise<void>;
  what: string;
  logger: Logger;
}

/**
 * Changes gathered in memory, folded per key, and written together `delayMs` after the first
 * one: a request or a miner call then costs no database write of its own. The recorders of
 * this service (`ApiKeyUsageRecorder`, `CredibilityRecorder`) hold one each; their shutdown
 * hooks `close()` it, so nothing recorded before shutdown is lost.
 */
export class WriteBuffer<K, V> {
  private pending = new Map<K, V>();
  private timer: NodeJS.Timeout | undefined;
  private readonly writes = new Set<Promise<void>>();
  private closed = false;
  /**
   * A batch fails every `delayMs` or so while the database is away: one line per 10 s, counting
   * the others, as the outage's own log does (a log audit counted about 700 a recorder in an hour).
   */
  private readonly failures: ThrottledWarning;

  constructor(private readonly options: WriteBufferOptions<K, V>) {
    const { what, logger } = options;
    this.failures = new ThrottledWarning(logger, {
      line: (subject) => `could not record ${what}: ${subject}`,
      summary: (count, seconds, last) =>
        `could not record ${what} ${count} more ${count === 1 ? 'time' : 'times'} in ${seconds} s; the last: ${last}`,
    });
  }

  /** Folds a change into what is pending for `key`; ignored once the buffer is closed. */
  add(key: K, fold: (pending: V | undefined) => V): void {
    if (this.closed) return;
    this.pending.set(key, fold(this.pending.get(key)));
    // Armed outside any request's log scope (see request-logging.ts): the first change is often
    // made while a request is handled, and a timer keeps the scope it was made in, so the batch's
    // failure was logged under that request's id, a request it has nothing to do with.
    this.timer ??= storage.exit(() => setTimeout(() => this.flush(), this.options.delayMs).unref());
  }

  /** Writes what is pending now and resolves once every write started so far has ended. */
  async settled(): Promise<void> {
    this.flush();
    while (this.writes.size > 0) await Promise.all(this.writes);
  }

  /**
   * Refuses later changes and waits for the last writes; the failures held back are said now
   * (their summary's timer would not outlive the process: a review's finding).
   */
  async close(): Promise<void> {
    this.closed = true;
    await this.settled();
    this.failures.flush();
  }

  private flush(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.pending.size === 0) return;
    const batch = this.pending;
    this.pending = new Map();
    const written = this.options
      .write(batch)
      .catch((error: Error) =>
        this.failures.warn(
          `${error.message} (${batch.size} ${batch.size === 1 ? 'change' : 'changes'} dropped)`,
        ),
      );
    this.writes.add(written);
    void written.finally(() => this.writes.delete(written));
  }
}

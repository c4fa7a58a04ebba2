import { Logger } from '@nestjs/common';
import { StoredBecause } from './stored/empty-answers';

/** How a user's on-demand query was answered: live by miners, or from stored data and why. */
export type AnswerPath = 'live' | StoredBecause;

const STORED_BECAUSE: Record<Exclude<StoredBecause, 'configured'>, string> = {
  refused:
    'the miners that might answer refuse OnDemandRequest (404: not served; remembered for an hour)',
  // The budget's window is MINER_CALL_BUDGETS' (90s, 30m, h, …): not "for the hour" (a log audit).
  budget:
    "no miner with an OnDemandRequest call left in this validator's budget answered " +
    '(MINER_CALL_BUDGETS)',
};

/** At most one line per this long: the path can change at every query. */
export const ANSWER_PATH_LINE_MS = 10 * 60_000;

/**
 * Logs at `info` how users' on-demand queries are answered under ON_DEMAND_MODE=auto when that
 * changes: from stored data (and why), or live again. Every answer says it in `meta.origin`, but
 * the log said nothing at any level when the service began answering every query from stored
 * data because the miners' budgets were spent (a log audit's finding). The path can change at
 * every query (a budget's call freeing up in its rolling window, a flaky round), so a change is
 * written at most once per ANSWER_PATH_LINE_MS, when a query is answered, with the changes held
 * back meanwhile counted; per process.
 */
export class AnswerPathLog {
  private readonly logger = new Logger('NetworkService');
  /** The path of the last answer, and the one the last line said (undefined: none yet). */
  private current: AnswerPath | undefined;
  private logged: AnswerPath | undefined;
  private loggedAt = -Infinity;
  /** Changes of path since the last line. */
  private changes = 0;

  constructor(private readonly now: () => number = () => performance.now()) {}

  note(path: AnswerPath): void {
    if (path === 'configured') return;
    if (path !== this.current) {
      this.changes += this.current === undefined ? 0 : 1;
      this.current = path;
    }
    // Live from the start is nothing to say.
    if (this.logged === undefined && path === 'live') this.logged = 'live';
    if (path === this.logged || this.now() - this.loggedAt < ANSWER_PATH_LINE_MS) return;
    const held =
      this.changes > 1
        ? ` (${this.changes} changes between live and stored since the last line)`
        : '';
    if (path === 'live')
      this.logger.log(`on-demand queries are answered live by miners again${held}`);
    else
      this.logger.log(
        `on-demand queries are answered from stored data: ${STORED_BECAUSE[path]}${held}`,
      );
    this.logged = path;
    this.loggedAt = this.now();
    this.changes = 0;
  }
}

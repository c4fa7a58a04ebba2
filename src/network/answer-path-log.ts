import { Logger } from '@nestjs/common';
import { StoredBecause } from './stored/empty-answers';

/** How a user's on-demand query was answered: live by miners, or from stored data and why. */
export type AnswerPath = 'live' | StoredBecause;

const STORED_BECAUSE: Record<Exclude<StoredBecause, 'configured'>, string> = {
  refused:
    'the miners that might answer refuse OnDemandRequest (404: not served; remembered for an hour)',
  budget:
    "every miner that might answer has no OnDemandRequest call left in this validator's budget " +
    'for the hour (MINER_CALL_BUDGETS)',
};

/**
 * Logs at `info` each change in how users' on-demand queries are answered under
 * ON_DEMAND_MODE=auto: from stored data (and why), or live again. Every answer says it in
 * `meta.origin`, but the log said nothing at any level when the service began answering every
 * query from stored data because the miners' budgets were spent (a log audit's finding). One
 * line per change, per process: budgets and 404s are remembered by the hour, so it changes
 * about that often at most.
 */
export class AnswerPathLog {
  private readonly logger = new Logger('NetworkService');
  private last: AnswerPath | undefined;

  note(path: AnswerPath): void {
    if (path === this.last || path === 'configured') return;
    const first = this.last === undefined;
    this.last = path;
    if (path !== 'live')
      this.logger.log(`on-demand queries are answered from stored data: ${STORED_BECAUSE[path]}`);
    else if (!first) this.logger.log('on-demand queries are answered live by miners again');
  }
}

import { setTimeout as sleep } from 'node:timers/promises';
import { Clock } from '../../common/clock/clock';
import { AppConfig } from '../../config/app-config';
import { ServingMiner } from '../miner.entity';
import { CallBudgets } from '../transport/call-budgets';

/**
 * A miner to sync, and when its GetMinerIndex budget has a call again (ms on the service's clock;
 * 0: now).
 */
export interface QueuedMiner {
  miner: ServingMiner;
  notBefore: number;
}

/**
 * How long a sync waits at most for a miner whose index call frees up soon. Budgets are rolling
 * windows: with 1 call an hour and a sync an hour, a miner called a little later in the last
 * sync than in this one (or a sync started early by another replica, up to a tenth of the
 * interval) would otherwise be skipped and refreshed only two hours apart.
 */
const MAX_BUDGET_WAIT_MS = 10 * 60_000;
const BUDGET_POLL_MS = 1000;

/**
 * The order an index sync calls the miners in, and its waits for their budgets: the sync follows
 * the GetMinerIndex budget (the configuration refuses an interval shorter than it allows), so
 * miners with a call left go first, a miner whose call frees up within a sixth of the interval
 * (at most 10 minutes) is waited for, and the others are called at once and refused by their
 * budget. Part of IndexSyncService, which builds it; `stopping` is the service's.
 */
export class MinerQueue {
  constructor(
    private readonly budgets: CallBudgets,
    private readonly clock: Clock,
    private readonly config: AppConfig,
    private readonly stopping: () => boolean,
  ) {}

  /**
   * Miners with an index call left first, then the others by when they have one again: when
   * Postgres' clock, which dates the calls, says it, moved to the service's clock.
   */
  async inBudgetOrder(miners: ServingMiner[]): Promise<QueuedMiner[]> {
    const databaseAheadMs = await this.databaseAheadMs();
    const left = await this.budgets
      .left(
        miners.map((miner) => miner.hotkey),
        'GetMinerIndex',
      )
      // Postgres away: every call will say so (no budget can be taken either).
      .catch(() => new Map<string, { left: number; nextAt: Date | null }>());
    const queued = miners.map((miner) => {
      const budget = left.get(miner.hotkey);
      const waits = budget !== undefined && budget.left === 0 && budget.nextAt !== null;
      return { miner, notBefore: waits ? budget.nextAt!.getTime() - databaseAheadMs : 0 };
    });
    // Stable: the ready ones keep their order.
    return queued.sort((a, b) => a.notBefore - b.notBefore);
  }

  /**
   * Waits until `notBefore` when it is near (see MAX_BUDGET_WAIT_MS), on the service's clock;
   * a miner further off is called at once and refused by its budget (skipped, never contacted).
   * Never longer than that on a monotonic clock: the service's clock set back during the wait
   * would hold the whole sync for as long (docs/decisions.md, "Clocks").
   */
  async waitForBudget(notBefore: number): Promise<void> {
    const { intervalMs } = this.config.network.indexSync;
    const longest = Math.min(MAX_BUDGET_WAIT_MS, intervalMs / 6);
    if (notBefore - this.clock.now().getTime() > longest) return;
    const givenUpAt = performance.now() + longest;
    for (
      let remaining = notBefore - this.clock.now().getTime();
      remaining > 0 && !this.stopping() && performance.now() < givenUpAt;
      remaining = notBefore - this.clock.now().getTime()
    )
      await sleep(Math.min(remaining, BUDGET_POLL_MS), undefined, { ref: false });
  }

  /**
   * How far Postgres' clock runs ahead of the service's (negative: behind), the midpoint of the
   * service's times around one read of it: budgets' `nextAt` is Postgres' time, and hosts' clocks
   * that disagree had the sync wait too long for a miner's call, or call it early and have it
   * refused. 0 when Postgres is away (no budget can be read or taken either).
   */
  private async databaseAheadMs(): Promise<number> {
    const before = this.clock.now().getTime();
    const databaseNow = await this.budgets.now().catch(() => undefined);
    if (!databaseNow) return 0;
    return databaseNow.getTime() - (before + this.clock.now().getTime()) / 2;
  }
}

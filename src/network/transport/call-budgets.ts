import { Injectable } from '@nestjs/common';
import { Clock } from '../../common/clock/clock';
import { AppConfig } from '../../config/app-config';
import { InjectConfig } from '../../config/config.module';
import { CallBudget } from '../../config/miner-network-settings';
import { SynapseName } from '../../common/synapse-names';
import { CallBudgetRepository } from './call-budget.repository';

export interface BudgetLeft {
  /** Calls the miner may still receive now (Infinity when the synapse has no budget). */
  left: number;
  /** When the oldest counted call leaves the window (null when none is counted). */
  nextAt: Date | null;
}

/**
 * Subnet 13 miners count a validator hotkey's calls in fixed 60-minute windows from their own
 * start, which the gateway cannot see: after a miner's 403, its window has surely reset an hour
 * later (or one budget window later, when the budget's window is longer).
 */
export const MINER_WINDOW_MS = 60 * 60_000;

/**
 * MINER_CALL_BUDGETS: how many calls of a synapse each miner may receive from this validator
 * hotkey per window, counted over a rolling window (never more than the budget in any window
 * of that length, whatever the miner's own fixed windows are), shared by all replicas through
 * Postgres, and surviving restarts. A call is taken before it is sent: miners count a call
 * when it arrives, even one they refuse. A miner's 403 spends the rest of the budget (`spend`).
 */
@Injectable()
export class CallBudgets {
  constructor(
    private readonly repository: CallBudgetRepository,
    private readonly clock: Clock,
    @InjectConfig() private readonly config: AppConfig,
  ) {}

  budgetOf(synapse: SynapseName): CallBudget | undefined {
    return this.config.network.callBudgets[synapse];
  }

  /** Takes one call of the miner's budget; false when none is left. Free without a budget. */
  async take(hotkey: string, synapse: SynapseName): Promise<boolean> {
    const budget = this.budgetOf(synapse);
    if (!budget) return true;
    const at = this.clock.now();
    const { granted } = await this.repository.reserve(
      hotkey,
      synapse,
      at,
      budget.calls,
      budget.windowMs,
    );
    return granted;
  }

  /**
   * The miner refused `synapse` with 403: whatever we counted, its limit for our hotkey is
   * reached (the co-located validator's calls, a restart of ours, a miner counting differently).
   * Marks the budget spent, for every replica, until the miner's window can have reset: for the
   * longer of an hour and the budget's window from now. Returns when calls may resume, or
   * undefined when the synapse has no budget (nothing to spend).
   */
  async spend(hotkey: string, synapse: SynapseName): Promise<Date | undefined> {
    const budget = this.budgetOf(synapse);
    if (!budget) return undefined;
    const at = this.clock.now().getTime();
    // Calls dated `windowMs` before the end stay counted until the end: the window is full.
    const until = at + Math.max(MINER_WINDOW_MS, budget.windowMs);
    if (budget.calls > 0)
      await this.repository.fill(hotkey, synapse, new Date(until - budget.windowMs), budget.calls);
    return new Date(until);
  }

  /** What each miner has left of its budget for `synapse` now. */
  async left(hotkeys: readonly string[], synapse: SynapseName): Promise<Map<string, BudgetLeft>> {
    const budget = this.budgetOf(synapse);
    if (!budget)
      return new Map(hotkeys.map((hotkey) => [hotkey, { left: Infinity, nextAt: null }]));
    const at = this.clock.now();
    const recent = await this.repository.recentCalls(hotkeys, synapse, at, budget.windowMs);
    return new Map(
      hotkeys.map((hotkey) => {
        const calls = recent.get(hotkey) ?? [];
        const oldest = calls[0];
        return [
          hotkey,
          {
            left: Math.max(0, budget.calls - calls.length),
            nextAt: oldest ? new Date(oldest.getTime() + budget.windowMs) : null,
          },
        ];
      }),
    );
  }
}

import { Injectable } from '@nestjs/common';
import { Clock } from '../../common/clock/clock';
import { AppConfig } from '../../config/app-config';
import { InjectConfig } from '../../config/config.module';
import { MINER_LIMIT_WINDOW_MS } from '../../config/miner-call-limits';
import { CallBudget } from '../../config/miner-network-settings';
import { SynapseName } from '../../common/synapse-names';
import { CallBudgetRepository, NetworkReserve, Reservation } from './call-budget.repository';

/**
 * Who a call is for: a user's request, a scraping task's collection (after users), the
 * gateway's own index spot check (which users and tasks leave a share of the network) or the
 * index sync's GetMinerIndex (no reserve: nothing else sends that synapse; named so that its
 * call lines do not read as a user's).
 */
export type CallPurpose = 'user' | 'task' | 'check' | 'sync';

/**
 * Whose query a call answers: a user's or a scraping task's (the spot checks and the index sync
 * call on their own).
 */
export type QueryPurpose = Exclude<CallPurpose, 'check' | 'sync'>;

/** The earliest time one of the budgets has a call again, if any will. */
export function nextCallAt(budgets: readonly BudgetLeft[]): Date | undefined {
  const next = budgets
    .map((entry) => entry.nextAt?.getTime() ?? Infinity)
    .reduce((a, b) => Math.min(a, b), Infinity);
  return Number.isFinite(next) ? new Date(next) : undefined;
}

/** The synapse the index spot checks call, of which users and tasks leave them a share. */
const CHECKED_SYNAPSE: SynapseName = 'GetDataEntityBucket';

export interface BudgetLeft {
  /** Calls the miner may still receive now (Infinity when the synapse has no budget). */
  left: number;
  /** When the oldest counted call leaves the window (null when none is counted). */
  nextAt: Date | null;
}

/**
 * MINER_CALL_BUDGETS: how many calls of a synapse each miner may receive from this validator
 * hotkey per window, counted over a rolling window (never more than the budget in any window
 * of that length, whatever the miner's own windows are), shared by all replicas through
 * Postgres, and surviving restarts. A call is taken before it is sent: miners count a call
 * when it arrives, even one they refuse. Two things would put two of our calls into one of a
 * miner's windows: a call that arrives later than it was counted (up to its timeout) and
 * replicas whose clocks disagree. So every window is counted MINER_CALL_BUDGET_MARGIN_SECONDS
 * longer than written, and calls are dated by Postgres's clock, the one clock all replicas
 * share. A miner's 403 spends the rest of the budget (`spend`).
 *
 * The calls are taken in order of purpose (`CallPurpose`), each reserve checked where the call
 * is taken so that no caller can skip it:
 * - scraping tasks' calls leave a share of every budget to users' queries: a task's call is
 *   taken only while more than TASK_BUDGET_RESERVE of the budget is left, and a task sees only
 *   what is left above it (`left`), so it picks miners it may call;
 * - users' and tasks' GetDataEntityBucket calls leave the index spot checks a share of the
 *   network (INDEX_SPOT_CHECK_RESERVE): beside a validator a miner allows one such call an
 *   hour, and a check can only pick a miner that still has it, so a miner's last call is taken
 *   only while more than that share of the miners that can be asked (rounded up) would still
 *   have one after it. That network is the askable miners with an index (the only ones the
 *   checks pick); the miner taking is always among the askable, so before the metagraph is
 *   known an indexed miner's last call is kept. Atomic in Postgres (CallBudgetRepository.reserve).
 */
@Injectable()
export class CallBudgets {
  private checkedNetwork: () => readonly string[] = () => [];

  constructor(
    private readonly repository: CallBudgetRepository,
    private readonly clock: Clock,
    @InjectConfig() private readonly config: AppConfig,
  ) {}

  budgetOf(synapse: SynapseName): CallBudget | undefined {
    return this.config.network.callBudgets[synapse];
  }

  /**
   * The hotkeys of the miners that may be asked the checked synapse (the metagraph's, less those
   * refusing it or with an open circuit): NetworkService sets it, as the metagraph sits above
   * the client that takes calls. Of these, the share counts those with an index (the ones the
   * spot checks can pick: CallBudgetRepository.reserve).
   */
  setCheckedNetwork(network: () => readonly string[]): void {
    this.checkedNetwork = network;
  }

  /**
   * Takes one call of the miner's budget, if `purpose` may: not granted when none is left (for
   * a task: none above the users' reserve) or, `kept`, when the spot checks' share keeps it.
   * Free without a budget.
   */
  async take(
    hotkey: string,
    synapse: SynapseName,
    purpose: CallPurpose = 'user',
  ): Promise<Reservation> {
    const budget = this.budgetOf(synapse);
    if (!budget) return { granted: true, kept: false, freeAt: null };
    return this.repository.reserve(
      hotkey,
      synapse,
      this.clock.shiftMs(),
      budget.calls - (purpose === 'task' ? this.usersReserve(budget) : 0),
      this.windowOf(budget),
      this.networkReserve(hotkey, synapse, budget, purpose),
      // A spot check's take waits for a user's or task's in progress, which counted the checked
      // miner as one keeping its call: taken in between, the share would be one miner short.
      this.isReserved(synapse),
    );
  }

  /**
   * Gives back a call `take` granted (its reservation's `at`) that was never sent: refused by
   * the miner's circuit, opened by other calls while this one was taken. The miner never
   * counted it, so it is no call of its window.
   */
  async giveBack(hotkey: string, synapse: SynapseName, at: Date): Promise<void> {
    await this.repository.giveBack(hotkey, synapse, at);
  }

  /** Postgres' time now (moved as the process clock is): the time calls are dated by. */
  async now(): Promise<Date> {
    return this.repository.now(this.clock.shiftMs());
  }

  /** The calls of a budget only users' queries take: TASK_BUDGET_RESERVE of it, rounded up. */
  usersReserve(budget: CallBudget): number {
    return Math.ceil(budget.calls * this.config.tasks.budgetReserve);
  }

  /**
   * The miner refused `synapse` with 403: whatever we counted, its limit for our hotkey is
   * reached (the co-located validator's calls, a restart of ours, a miner counting differently).
   * Marks the budget spent, for every replica, until the miner's window can have reset: for the
   * longer of an hour and the budget's window from now, and the margin. Returns when calls may
   * resume, or undefined when the synapse has no budget (nothing to spend).
   */
  async spend(hotkey: string, synapse: SynapseName): Promise<Date | undefined> {
    const budget = this.budgetOf(synapse);
    if (!budget) return undefined;
    const at = (await this.now()).getTime();
    // After a miner's 403 its window (MINER_LIMIT_WINDOW_MS) has surely ended an hour later, or
    // one budget window later when the budget's window is longer.
    const until =
      at +
      Math.max(MINER_LIMIT_WINDOW_MS, budget.windowMs) +
      this.config.network.callBudgetMarginMs;
    // Calls dated a (counted) window before the end stay counted until the end: the window is full.
    if (budget.calls > 0)
      await this.repository.fill(
        hotkey,
        synapse,
        new Date(until - this.windowOf(budget)),
        budget.calls,
      );
    return new Date(until);
  }

  /** What each miner has left of its budget for `synapse` now (for a task: above the reserve). */
  async left(
    hotkeys: readonly string[],
    synapse: SynapseName,
    purpose: CallPurpose = 'user',
  ): Promise<Map<string, BudgetLeft>> {
    // No miner to ask about (query_bucket with no holder that may be asked): no round trip.
    if (hotkeys.length === 0) return new Map();
    const budget = this.budgetOf(synapse);
    if (!budget)
      return new Map(hotkeys.map((hotkey) => [hotkey, { left: Infinity, nextAt: null }]));
    const windowMs = this.windowOf(budget);
    const limit = budget.calls - (purpose === 'task' ? this.usersReserve(budget) : 0);
    const recent = await this.repository.recentCalls(
      hotkeys,
      synapse,
      this.clock.shiftMs(),
      windowMs,
    );
    return new Map(
      hotkeys.map((hotkey) => {
        const calls = recent.get(hotkey) ?? [];
        const oldest = calls[0];
        return [
          hotkey,
          {
            left: Math.max(0, limit - calls.length),
            nextAt: oldest ? new Date(oldest.getTime() + windowMs) : null,
          },
        ];
      }),
    );
  }

  /** The spot checks' share of the network, which a user's or task's call must leave them. */
  private networkReserve(
    hotkey: string,
    synapse: SynapseName,
    budget: CallBudget,
    purpose: CallPurpose,
  ): NetworkReserve | undefined {
    if (purpose === 'check' || !this.isReserved(synapse)) return undefined;
    const share = this.config.network.indexSync.spotCheckReserve;
    // Before the metagraph is known the taker alone is the network: its last call is kept.
    const askable = [...new Set([...this.checkedNetwork(), hotkey])];
    return { askable, keep: (size) => Math.ceil(size * share), budget: budget.calls };
  }

  /** True for the synapse whose calls leave the spot checks a share (none at a share of 0). */
  private isReserved(synapse: SynapseName): boolean {
    return synapse === CHECKED_SYNAPSE && this.config.network.indexSync.spotCheckReserve > 0;
  }

  /** The window a budget is counted over: as written, and the margin for late arrivals. */
  private windowOf(budget: CallBudget): number {
    return budget.windowMs + this.config.network.callBudgetMarginMs;
  }
}

import { EnvironmentVariables } from './environment-variables';
import { MAX_TIMER_SECONDS } from './setting-forms';
import { CallBudgets, describeBudget } from './miner-network-settings';

/**
 * The shortest index sync interval the GetMinerIndex budget allows, in seconds: its window
 * divided by its calls, `bare` and with MINER_CALL_BUDGET_MARGIN_SECONDS (`counted`, as the
 * budget counts it); undefined without a budget.
 */
function shortestIndexSync(
  vars: EnvironmentVariables,
  budgets: CallBudgets,
): { bare: number; counted: number } | undefined {
  const index = budgets.GetMinerIndex;
  if (!index || index.calls === 0) return undefined;
  const windowSeconds = index.windowMs / 1000;
  return {
    bare: Math.ceil(windowSeconds / index.calls),
    counted: Math.ceil((windowSeconds + vars.MINER_CALL_BUDGET_MARGIN_SECONDS) / index.calls),
  };
}

/**
 * INDEX_SYNC_INTERVAL, raised to what the budget counts when it lies within the margin: 3600,
 * the default before the margin existed (and written in many a .env), syncs every 3900 s rather
 * than failing to start; a sync sooner would find every miner's call not yet back.
 */
export function indexSyncSeconds(vars: EnvironmentVariables, budgets: CallBudgets): number {
  const shortest = shortestIndexSync(vars, budgets);
  return Math.max(vars.INDEX_SYNC_INTERVAL, shortest?.counted ?? 0);
}

/**
 * The index sync follows from the budgets: a sync takes one GetMinerIndex per miner, so syncing
 * more often than the budget allows would find every miner without a call left (and, beside a
 * validator on the same hotkey, take its calls); a spot check takes one GetDataEntityBucket.
 * Refused at start rather than quietly slowed down, so the operator learns what the budget
 * allows: INDEX_SYNC_INTERVAL is at least the budget's window divided by its calls (an
 * interval within MINER_CALL_BUDGET_MARGIN_SECONDS of that is raised, indexSyncSeconds). A
 * budget whose interval would outgrow the longest timer Node keeps (MAX_TIMER_SECONDS) is refused:
 * the sync's timer would fire at once, every millisecond.
 */
export function indexSyncProblems(
  vars: EnvironmentVariables,
  budgets: CallBudgets,
  validatorSharesHotkey: boolean,
): string[] {
  const problems: string[] = [];
  const index = budgets.GetMinerIndex;
  const source = `the budget comes from MINER_CALL_BUDGETS over VALIDATOR_SHARES_HOTKEY=${validatorSharesHotkey}`;
  if (index?.calls === 0)
    problems.push(
      `MINER_CALL_BUDGETS: GetMinerIndex=${describeBudget(index)} allows no index call, so the miner index could never be synced (give it at least 1 call, or none for no budget)`,
    );
  else if (index) {
    const shortest = shortestIndexSync(vars, budgets)!;
    if (shortest.counted > MAX_TIMER_SECONDS)
      problems.push(
        `MINER_CALL_BUDGETS: GetMinerIndex=${describeBudget(index)} (its window counted ${vars.MINER_CALL_BUDGET_MARGIN_SECONDS} s longer, MINER_CALL_BUDGET_MARGIN_SECONDS) would sync the index every ${shortest.counted} s, beyond the longest timer Node keeps (${MAX_TIMER_SECONDS} s, about 24.8 days); give it more calls or a shorter window`,
      );
    else if (vars.INDEX_SYNC_INTERVAL < shortest.bare)
      problems.push(
        `INDEX_SYNC_INTERVAL: ${vars.INDEX_SYNC_INTERVAL} s syncs more often than the GetMinerIndex budget of ${describeBudget(index)} per miner allows (its window counted ${vars.MINER_CALL_BUDGET_MARGIN_SECONDS} s longer, MINER_CALL_BUDGET_MARGIN_SECONDS); set it to at least ${shortest.counted}, or raise the budget (${source})`,
      );
  }
  const bucket = budgets.GetDataEntityBucket;
  if (bucket?.calls === 0 && vars.INDEX_SPOT_CHECKS > 0)
    problems.push(
      `INDEX_SPOT_CHECKS: spot checks call GetDataEntityBucket, whose budget of ${describeBudget(bucket)} allows none; set INDEX_SPOT_CHECKS=0 or give GetDataEntityBucket a budget`,
    );
  return problems;
}

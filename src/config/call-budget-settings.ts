import { EnvironmentVariables } from './environment-variables';
import { indexSyncProblems } from './index-sync-schedule';
import { devnetMiners } from './metagraph-source';
import {
  callArrivalDelay,
  callBudgetExcesses,
  defaultCallBudgets,
  loopbackOnly,
} from './miner-call-limits';
import { AllowedNetworks, CallBudgets, parseCallBudgets } from './miner-network-settings';
import { parsed } from './variable-problems';

/** Whether every variable named passed its own rules (loadConfig). */
export type PassedOwnRules = (...names: (keyof EnvironmentVariables)[]) => boolean;

/**
 * VALIDATOR_SHARES_HOTKEY as set; unset, `true` (the subnet's validator signs with this hotkey),
 * except in front of the devnet `npm start` runs, where no validator calls the miners. Leaving
 * that absent validator its calls gave the gateway one bucket call a miner an hour: the first
 * index sync's spot checks took 5 of the 8, the spot checks' share kept the rest, and every
 * `query_bucket` after `npm start` answered `status: "error"` until the hour was over.
 */
export function sharesHotkey(vars: EnvironmentVariables): boolean {
  if (vars.VALIDATOR_SHARES_HOTKEY !== undefined) return vars.VALIDATOR_SHARES_HOTKEY === 'true';
  return devnetMiners(vars) === 0;
}

/**
 * MINER_CALL_BUDGETS over the default budgets, held to the index sync's schedule and, wherever
 * real miners can be reached, to the miners' limits; its problems go to `problems`.
 */
export function minerCallBudgets(
  problems: string[],
  vars: EnvironmentVariables,
  valid: PassedOwnRules,
  allowedNetworks: AllowedNetworks | undefined,
  validatorSharesHotkey: boolean,
): CallBudgets | undefined {
  const callBudgets = parsed(problems, 'MINER_CALL_BUDGETS', () =>
    parseCallBudgets(vars.MINER_CALL_BUDGETS ?? '', defaultCallBudgets(validatorSharesHotkey)),
  );
  const marginValid = valid('MINER_CALL_BUDGET_MARGIN_SECONDS');
  if (callBudgets && marginValid && valid('INDEX_SYNC_INTERVAL', 'INDEX_SPOT_CHECKS'))
    problems.push(...indexSyncProblems(vars, callBudgets, validatorSharesHotkey));
  // Wherever real miners can be reached (any network beyond loopback, in any NODE_ENV), a
  // budget above their limits is refused. In front of a devnet on loopback only (development,
  // tests, the benchmarks), configWarnings says it. A margin its own rule refuses is already a
  // problem of its own: the arithmetic with it would only add noise.
  // A timeout its own rule refuses likewise.
  const timeoutsValid = valid(
    'INDEX_FETCH_TIMEOUT_MS',
    'BUCKET_FETCH_TIMEOUT_MS',
    'QUERY_DEADLINE_MS',
  );
  if (
    callBudgets &&
    allowedNetworks &&
    !loopbackOnly(allowedNetworks) &&
    marginValid &&
    timeoutsValid
  )
    problems.push(
      ...callBudgetExcesses(
        callBudgets,
        validatorSharesHotkey,
        vars.MINER_CALL_BUDGET_MARGIN_SECONDS * 1000,
        callArrivalDelay(vars),
      ),
    );
  return callBudgets;
}

import { SYNAPSE_NAMES, SynapseName } from '../common/synapse-names';
import { AllowedNetworks, CallBudget, CallBudgets, describeBudget } from './miner-network-settings';

/**
 * How long a subnet 13 miner counts a validator hotkey's calls: one set of counters, cleared
 * together by the first call that arrives 60 minutes or more after the last clearing (its
 * neurons/miner.py default_blacklist). A window is half-open: a call 60 minutes after another
 * is never counted with it.
 */
export const MINER_LIMIT_WINDOW_MS = 60 * 60_000;

/** How long the gateway gives a connect to a miner (the miner client's connector). */
export const MINER_CONNECT_TIMEOUT_MS = 10_000;

/**
 * The settings of the timeouts the gateway gives its miner calls: GetMinerIndex's, the bucket
 * calls' (GetDataEntityBucket and GetContentsByBuckets) and OnDemandRequest's (the query
 * deadline). Each bounds the whole call, its connect included.
 */
const MINER_CALL_TIMEOUTS = [
  'INDEX_FETCH_TIMEOUT_MS',
  'BUCKET_FETCH_TIMEOUT_MS',
  'QUERY_DEADLINE_MS',
] as const;

/** The timeouts the gateway gives its miner calls, by setting (MINER_CALL_TIMEOUTS). */
export type MinerCallTimeouts = Readonly<Record<(typeof MINER_CALL_TIMEOUTS)[number], number>>;

/** What a call may take on its way beyond its timeout: the count's commit, the event loop. */
const CALL_SKEW_MS = 5_000;

/** The longest a call may arrive at a miner after the gateway counted it (callArrivalDelay). */
export interface CallArrivalDelay {
  ms: number;
  /** The setting of the longest timeout, which the delay follows. */
  longest: keyof MinerCallTimeouts;
  longestMs: number;
}

/**
 * The longest a call may be counted by a miner after the gateway counted it: taken from the
 * budget before it is sent, it is counted when the miner's event loop reaches its blacklist
 * (before the signature check), which nothing bounds but the call's own timeout (a slow
 * connect, a busy miner reading it late); then a few seconds of skew. So the longest timeout
 * the gateway gives a miner call, and 5 s.
 */
export function callArrivalDelay(timeouts: MinerCallTimeouts): CallArrivalDelay {
  const longest = MINER_CALL_TIMEOUTS.reduce((a, b) => (timeouts[b] > timeouts[a] ? b : a));
  return { ms: timeouts[longest] + CALL_SKEW_MS, longest, longestMs: timeouts[longest] };
}

/**
 * What a miner allows one validator hotkey per window (bittensor-wire.md §3: common/protocol.py
 * REQUEST_LIMIT_BY_TYPE_PER_PERIOD, doubled "to account for restarts"); refused calls count.
 */
export const MINER_LIMITS: Readonly<Record<SynapseName, number>> = {
  GetMinerIndex: 2,
  GetDataEntityBucket: 2,
  GetContentsByBuckets: 10,
  OnDemandRequest: 10,
};

/**
 * What the subnet's validator spends of them per miner per window when it evaluates the miner
 * (about hourly), signing with the same hotkey as the gateway (VALIDATOR_SHARES_HOTKEY): one
 * index and one bucket; its evaluation never sends the bulk call nor on-demand.
 */
export const VALIDATOR_EVALUATION_CALLS: Readonly<Record<SynapseName, number>> = {
  GetMinerIndex: 1,
  GetDataEntityBucket: 1,
  GetContentsByBuckets: 0,
  OnDemandRequest: 0,
};

/**
 * The most calls of a synapse the gateway may send a miner within one of its windows: the
 * miner's limit, less the validator's evaluation when it shares the hotkey (1/1/10/10; without
 * it 2/2/10/10). Above it a call is refused, and beside a validator its evaluation, whose 403
 * scores the miner as failing. The defaults keep 2 of the 10 bulk and on-demand calls as a
 * margin (defaultCallBudgets); spending them hurts no evaluation, so it is not refused.
 */
export function minerCallCeiling(synapse: SynapseName, validatorSharesHotkey: boolean): number {
  return MINER_LIMITS[synapse] - (validatorSharesHotkey ? VALIDATOR_EVALUATION_CALLS[synapse] : 0);
}

/**
 * What the default budgets leave unspent of the ceiling beside a validator: 2 of the 10 bulk
 * and on-demand calls, as the subnet doubles its own limits for restarts (a validator whose own
 * API sends OnDemandRequest spends them; README, "Budgets shared with a validator").
 */
const DEFAULT_MARGIN_BESIDE_VALIDATOR: Readonly<Record<SynapseName, number>> = {
  GetMinerIndex: 0,
  GetDataEntityBucket: 0,
  GetContentsByBuckets: 2,
  OnDemandRequest: 2,
};

/**
 * The default budgets per miner per hour: the ceiling (minerCallCeiling), and beside a
 * validator on the same hotkey (VALIDATOR_SHARES_HOTKEY, the default) less a small margin:
 * 1 GetMinerIndex, 1 GetDataEntityBucket, 8 GetContentsByBuckets, 8 OnDemandRequest; on a
 * hotkey of its own, all of it (2, 2, 10, 10).
 */
export function defaultCallBudgets(validatorSharesHotkey: boolean): CallBudgets {
  return Object.fromEntries(
    SYNAPSE_NAMES.map((synapse) => [
      synapse,
      {
        calls:
          minerCallCeiling(synapse, validatorSharesHotkey) -
          (validatorSharesHotkey ? DEFAULT_MARGIN_BESIDE_VALIDATOR[synapse] : 0),
        windowMs: MINER_LIMIT_WINDOW_MS,
      },
    ]),
  );
}

/**
 * The most calls a budget of N calls per window W lets the gateway send a miner within one of
 * the miner's 60-minute windows. CallBudgets counts W + margin (W'), and grants a call while
 * fewer than N calls lie in the W' before it: so any half-open span of W' holds at most N. A
 * call arrives up to `delayMs` (D, callArrivalDelay) after it is counted, so the calls arriving
 * in a 60-minute window were counted within a span of 60 min + D, covered by
 * ceil((60 min + D) / W') such spans: at most N × ceil((60 min + D) / W'). Bursts of N at 0,
 * W', 2W', …, the first arriving D late, reach it. So with the default D of 145 s, 1/h (W'
 * 65 min) sends 1; 1/30m (35 min) 2; 2/2h 2; 10/20m (25 min) 30; and 1/h with no margin 2:
 * counted an hour apart, the first arriving late, two calls met in one window, and the
 * validator's evaluation after them was refused.
 */
export function mostCallsPerMinerWindow(
  budget: CallBudget,
  marginMs: number,
  delayMs: number,
): number {
  return budget.calls * Math.ceil((MINER_LIMIT_WINDOW_MS + delayMs) / (budget.windowMs + marginMs));
}

/**
 * The budgets (MINER_CALL_BUDGETS over the defaults of VALIDATOR_SHARES_HOTKEY) that would let
 * the gateway send a miner more calls of a synapse within one of its windows than
 * minerCallCeiling, or that remove the budget of a synapse miners limit: one sentence each.
 */
export function callBudgetExcesses(
  budgets: CallBudgets,
  validatorSharesHotkey: boolean,
  marginMs: number,
  delay: CallArrivalDelay,
): string[] {
  const beside = validatorSharesHotkey
    ? `beside the validator on the same hotkey (VALIDATOR_SHARES_HOTKEY=true: `
    : `(VALIDATOR_SHARES_HOTKEY=false: `;
  return SYNAPSE_NAMES.flatMap((synapse) => {
    const ceiling = minerCallCeiling(synapse, validatorSharesHotkey);
    const allowed =
      `miners allow this hotkey ${ceiling} ${synapse} per 60 minutes ${beside}` +
      (validatorSharesHotkey
        ? `their ${MINER_LIMITS[synapse]} less the ${VALIDATOR_EVALUATION_CALLS[synapse]} of its evaluation)`
        : `their whole limit)`);
    const budget = budgets[synapse];
    if (!budget)
      return [
        `MINER_CALL_BUDGETS: ${synapse} has no budget (none), but ${allowed}; an unlimited gateway ` +
          `takes more and the miner refuses the rest of its window with 403` +
          (validatorSharesHotkey && VALIDATOR_EVALUATION_CALLS[synapse] > 0
            ? `, the validator's evaluation included (the miner is scored as failing it)`
            : ''),
      ];
    const most = mostCallsPerMinerWindow(budget, marginMs, delay.ms);
    if (most <= ceiling) return [];
    const delaySeconds = delay.ms / 1000;
    // A margin shorter than a call's delay is what exceeds, not the budget.
    if (marginMs < delay.ms && mostCallsPerMinerWindow(budget, delay.ms, delay.ms) <= ceiling)
      return [
        `MINER_CALL_BUDGET_MARGIN_SECONDS: ${marginMs / 1000} s is shorter than the ` +
          `${delaySeconds} s a call may arrive after it is counted (a miner counts it when it ` +
          `reads it, as late as the call's timeout: ${delay.longest}=${delay.longestMs}, the ` +
          `longest, and ${CALL_SKEW_MS / 1000} s more), so ${synapse}=${describeBudget(budget)} ` +
          `can send a miner ${most} calls within 60 minutes, but ${allowed}; set it to at least ` +
          `${Math.ceil(delaySeconds)} (the default is 300), or shorten ${delay.longest}`,
      ];
    return [
      `MINER_CALL_BUDGETS: ${synapse}=${describeBudget(budget)} can send a miner ${most} calls ` +
        `within 60 minutes (its window counted ${marginMs / 1000} s longer, ` +
        `MINER_CALL_BUDGET_MARGIN_SECONDS, a call arriving up to ${delaySeconds} s after it is ` +
        `counted), but ${allowed}; give it at most ${ceiling}/h (or fewer calls over a longer window)`,
    ];
  });
}

/**
 * Whether the gateway may call miners on loopback only: a devnet on this machine (the
 * benchmarks', docker-compose's devnet profile), never the subnet's miners, whose limits
 * callBudgetExcesses guards.
 */
export function loopbackOnly(networks: AllowedNetworks): boolean {
  return (
    !networks.publicUnicast &&
    networks.cidrs.every((cidr) => {
      const ipv4 = /^127\.\d+\.\d+\.\d+\/(\d+)$/.exec(cidr);
      return cidr === '::1/128' || (ipv4 !== null && Number(ipv4[1]) >= 8);
    })
  );
}

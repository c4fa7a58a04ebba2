import { QuorumResult } from '../common/metrics/metrics.service';
import { isDroppedWhole, isMostlyDropped } from './answer-checks';
import { DataItem } from './protocol';
import { NetworkQueryResult } from './query-result';
import { QuorumOutcome } from './quorum';
import { MinerFailureReason, QueryFailures } from './query-failures';

// What a live round's outcome says: its result, its quorum's label, and why no answer.

/**
 * A quorum of answers that passed the checks, empty ones among them (they may agree on nothing).
 */
export function quorumResult(outcome: QuorumOutcome, quorum: number): QuorumResult {
  if (outcome.answers.filter((answer) => !isMostlyDropped(answer)).length >= quorum)
    return 'quorum';
  return outcome.answers.length > 0 ? 'partial' : 'no_answer';
}

/** A live round's result, as the query's answer and its `meta` say it. */
export function summarize(
  outcome: QuorumOutcome,
  { items, consensus }: { items: DataItem[]; consensus: number },
  limit: number,
  minersWithoutBudget: number,
): NetworkQueryResult {
  const reasons: QueryFailures['reasons'] = {};
  for (const reason of outcome.failures.values()) reasons[reason] = (reasons[reason] ?? 0) + 1;
  // Silent at the deadline is, for this request, a timeout (the call itself ends later).
  const late = outcome.deadlineReached ? outcome.unanswered.length : 0;
  if (late > 0) reasons.timeout = (reasons.timeout ?? 0) + late;
  // Answered, but every item dropped: no usable answer either.
  const lied = outcome.answers.filter(isDroppedWhole).length;
  if (lied > 0) reasons.invalid_items = lied;
  return {
    items,
    error: outcome.answers.length === lied ? whyNoAnswer(outcome) : undefined,
    origin: 'live',
    minersQueried: outcome.queried.length,
    minersResponded: outcome.answers.length,
    minersEmpty: outcome.answers.filter((answer) => answer.returned === 0).length,
    minersPassedChecks: outcome.answers.filter((answer) => answer.dropped === 0).length,
    minersFailed: { count: outcome.failures.size + late + lied, reasons },
    minersWithoutBudget,
    itemsDroppedInvalid: outcome.answers.reduce((sum, answer) => sum + answer.dropped, 0),
    consensus,
    hedged: outcome.hedged,
    deadlineReached: outcome.deadlineReached,
    limitReached: outcome.answers.some((answer) => answer.returned >= limit),
  };
}

/**
 * Why no miner gave a usable answer (none answered, or every answer's items were dropped): an
 * error, never "nothing matched", which clients of the hosted API read as "none exists".
 */
function whyNoAnswer(outcome: QuorumOutcome): string {
  // The deadline's words only when it is what every miner failed by: three miners answering
  // 500 at once beside one silent blamed the deadline, and an operator would raise
  // QUERY_DEADLINE_MS for nothing (an error texts audit's finding).
  // The miners still silent at the deadline failed by it too (summarize counts them timeouts):
  // left out, two busy miners beside a silent one read "Every queried miner was busy" (a review).
  const failures: MinerFailureReason[] = [
    ...outcome.failures.values(),
    ...(outcome.deadlineReached ? outcome.unanswered.map(() => 'timeout' as const) : []),
  ];
  if (
    outcome.answers.length === 0 &&
    outcome.deadlineReached &&
    failures.every((reason) => reason === 'timeout')
  )
    return 'No miner answered within the deadline';
  const [first, ...rest] = failures;
  const shared =
    first !== undefined && rest.every((reason) => reason === first) ? first : undefined;
  const said = shared && EVERY_ONE_FAILED_SO[shared];
  if (outcome.answers.length === 0 && said) return said;
  return 'Every queried miner failed';
}

/** What a round says when every queried miner failed for this one reason. */
const EVERY_ONE_FAILED_SO: Partial<Record<MinerFailureReason, string>> = {
  busy:
    'Every queried miner was busy: this gateway already had as many calls in flight to it as ' +
    'it allows (MINER_CONCURRENCY), or the miner answered 503',
  no_budget:
    "Every queried miner was out of calls when its turn came: other queries had just spent this validator's " +
    'OnDemandRequest budget for the hour (MINER_CALL_BUDGETS), or the budget could not be read',
};

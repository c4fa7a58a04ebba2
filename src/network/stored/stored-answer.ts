import { DataItem } from '../protocol';
import { consensusOf, isDroppedWhole } from '../answer-checks';
import { MinerFailureReason, QueryFailures } from '../query-failures';
import { bucketKeyOf, SelectedBucket } from './bucket-selection';
import { CallReport } from './contents-fetcher';
import { PlannedCall } from './holder-choice';
import { StoredItem } from './item-store';
import { StoredQueryPlan } from './query-plan';

/** How an answer from stored data was obtained: what `meta` reports beside the items. */
export interface StoredAnswer {
  items: DataItem[];
  /** Set when nothing could be answered because no holder could be asked or answered. */
  error?: string;
  /**
   * `partial`: the query names no label (or `any` mixes in other keywords), or no miner's index
   * is loaded (`indexLoaded`): only stored items; or the range reaches before the 30-day
   * horizon (StoredQueryPlan.coverage); or a bucket the query needs is missing
   * (`buckets.missing`): neither fresh in the store nor delivered in time (a delivery whose
   * every content the checks dropped is none: contents-check.ts, deliveriesToKeep); or the
   * planned hours gave fewer than `limit` items and older held hours were never planned; or a
   * holder of a planned bucket has a claim neither the store nor this round read (its copy may
   * hold posts the others lack: SelectedBucket.unfetched).
   */
  coverage: 'complete' | 'partial';
  /**
   * The query names labels whose buckets were planned (StoredQueryPlan.labels); false: it names
   * none (or mixes them with other keywords in `any` mode), and only the store was read.
   */
  namesLabels: boolean;
  /**
   * False when the query's labels have no bucket in the index because no miner's index is
   * loaded (MinerIndexService.anyIndexLoaded), not because no miner holds them.
   */
  indexLoaded: boolean;
  buckets: { planned: number; fromStore: number; fetchedNow: number; missing: number };
  /** When the oldest fetch among the returned items was made (null: no items). */
  oldestFetchedAt: Date | null;
  miners: {
    queried: number;
    responded: number;
    failed: QueryFailures;
    /** Answered, and no answered call of it sent any content. */
    empty: number;
    /** Answered, and every content passed the checks and every bucket its claimed size. */
    passedChecks: number;
  };
  itemsDroppedInvalid: number;
  /** Share of the returned items delivered by at least two operators (coldkeys). */
  consensus: number;
  deadlineReached: boolean;
}

/** One query's fetches: its calls, the reports of those that ended, the buckets kept. */
export interface FetchRound {
  calls: PlannedCall[];
  /** Reports of the calls that have ended. */
  reports: Map<PlannedCall, CallReport>;
  /** Buckets whose fetch has ended: true when a delivery of it is in the store. */
  delivered: Map<string, boolean>;
  done: Promise<void>;
  /**
   * With no call made: when the first budget call of the wanted buckets' holders frees up, if
   * their budgets are what stopped it (undefined otherwise).
   */
  firstCallAt?: Date;
}

/** What the answer's path found besides its buckets, round and items (summarize). */
export interface SummaryFlags {
  /** The deadline passed before every call of the round ended. */
  deadlineReached: boolean;
  /** Some miner's index is loaded (StoredAnswer.indexLoaded); true when absent. */
  indexLoaded?: boolean;
  /**
   * The read went past the chosen hours, over older held hours never planned (the estimate of
   * the chosen ones fell short); false when absent.
   */
  unplannedSkipped?: boolean;
  /** The store's read stopped at its bound on rows with rows left (StoredPage.cut). */
  readCut?: boolean;
  /**
   * Coldkeys by hotkey (the metagraph's): `consensus` counts operators, as live answers do. A
   * hotkey missing here (no longer in the metagraph) counts as an operator of its own.
   */
  coldkeys?: ReadonlyMap<string, string>;
  /** The largest claim one call may carry (largestClaimAsked): a holder claiming more is not asked. */
  maxBytesPerCall?: number;
}

/** The answer and its counts, once the fetch round is over or the deadline passed. */
export function summarize(
  plan: StoredQueryPlan,
  selected: readonly SelectedBucket[],
  round: FetchRound,
  stored: readonly StoredItem[],
  {
    deadlineReached,
    indexLoaded = true,
    unplannedSkipped = false,
    readCut = false,
    coldkeys = new Map<string, string>(),
    maxBytesPerCall = Infinity,
  }: SummaryFlags,
): StoredAnswer {
  const fromStore = selected.filter((bucket) => bucket.fromStore).length;
  const fetchedNow = [...round.delivered.values()].filter(Boolean).length;
  const missing = selected.length - fromStore - fetchedNow;

  const queried = new Set(round.calls.map((call) => call.holder.uid));
  /**
   * What each miner that answered sent, and what of it was dropped, over all its answered calls.
   */
  const sent = new Map<number, { returned: number; dropped: number }>();
  const failedChecks = new Set<number>();
  /** Each miner's first failure: one reason per miner, as the live path's one call gives. */
  const firstFailure = new Map<number, MinerFailureReason>();
  let dropped = 0;
  for (const call of round.calls) {
    const report = round.reports.get(call);
    const uid = call.holder.uid;
    const failure = report ? report.failure : 'timeout';
    if (failure) {
      if (!firstFailure.has(uid)) firstFailure.set(uid, failure);
      continue;
    }
    const its = sent.get(uid) ?? { returned: 0, dropped: 0 };
    sent.set(uid, {
      returned: its.returned + report!.returned,
      dropped: its.dropped + report!.dropped,
    });
    dropped += report!.dropped;
    if (report!.score !== 1) failedChecks.add(uid);
  }
  const responded = new Set(sent.keys());
  // A miner is empty when its answered calls together sent nothing: a holder of several
  // buckets gets several calls, and one empty call beside others with contents is no empty
  // miner (it was counted as one, though `empty_response_miners` is "answered no items at all").
  const empty = [...sent.values()].filter((its) => its.returned === 0).length;
  // A miner that answered one of its calls did not fail the query: its other calls' failures
  // are in neither the count nor the reasons, so that the reasons add up to the count. Unless
  // the checks dropped all it sent: then it failed, `invalid_items`, as on the live path.
  const reasons: QueryFailures['reasons'] = {};
  let failedCount = 0;
  for (const [uid, failure] of firstFailure) {
    if (responded.has(uid)) continue;
    reasons[failure] = (reasons[failure] ?? 0) + 1;
    failedCount += 1;
  }
  const lied = [...sent.values()].filter(isDroppedWhole).length;
  if (lied > 0) reasons.invalid_items = lied;
  failedCount += lied;
  const items = stored.map((entry) => entry.item);
  const operators = stored.map(
    (entry) => new Set(entry.deliveredBy.map((hotkey) => coldkeys.get(hotkey) ?? hotkey)).size,
  );
  const oldest = stored.reduce<Date | null>(
    (min, entry) => (min === null || entry.fetchedAt < min ? entry.fetchedAt : min),
    null,
  );
  const nothingAnswered = items.length === 0 && missing > 0 && fromStore === 0 && fetchedNow === 0;
  return {
    items,
    error: nothingAnswered
      ? whyMissing(round, missingBuckets(selected, round), deadlineReached, maxBytesPerCall)
      : undefined,
    // An answer short of buckets it needed holds only part of what matches: it said `complete`,
    // and a client took the missing hours for hours without data.
    // So is one whose read went past the chosen hours over held hours never planned (the
    // estimate of the chosen ones fell short): it skipped matches newer than what it answers.
    // So is one with a copy of a planned bucket left unread: miners scrape on their own, and the
    // post a query looks for may sit in that copy alone (an audit found "no data" so).
    // So is one whose read the store cut at its bound on rows (a post's copies at many times).
    coverage:
      indexLoaded && missing === 0 && !unplannedSkipped && !readCut && !copyUnread(selected, round)
        ? plan.coverage
        : 'partial',
    namesLabels: plan.labels.length > 0,
    indexLoaded,
    buckets: { planned: selected.length, fromStore, fetchedNow, missing },
    oldestFetchedAt: oldest,
    miners: {
      queried: queried.size,
      responded: responded.size,
      failed: { count: failedCount, reasons },
      empty,
      passedChecks: [...responded].filter((uid) => !failedChecks.has(uid)).length,
    },
    itemsDroppedInvalid: dropped,
    consensus: consensusOf(operators),
    deadlineReached,
  };
}

/**
 * Whether a holder of a selected bucket has a current claim that neither an up-to-date fetch in
 * the store nor a delivery of this round read. A bucket another query of this process fetched
 * for this one counts as unread: its deliveries are in that query's round.
 */
function copyUnread(selected: readonly SelectedBucket[], round: FetchRound): boolean {
  const read = new Set<string>();
  for (const call of round.calls)
    for (const key of round.reports.get(call)?.delivered ?? [])
      read.add(`${call.holder.uid} ${key}`);
  return selected.some((chosen) => {
    const key = bucketKeyOf(chosen.bucket);
    return chosen.unfetched.some((holder) => !read.has(`${holder.uid} ${key}`));
  });
}

/** The selected buckets neither the store answered nor this round's fetches delivered. */
function missingBuckets(selected: readonly SelectedBucket[], round: FetchRound): SelectedBucket[] {
  return selected.filter(
    (chosen) => !chosen.fromStore && round.delivered.get(bucketKeyOf(chosen.bucket)) !== true,
  );
}

/**
 * Why nothing was answered, in the words a user can act on: the holders' claims too large for
 * one call, another query's fetch of the same buckets still under way at the deadline (the
 * round made no call of its own: it awaited that fetch), or the reasons a holder is not asked
 * (a hostile-miner audit's finding: the first two read as the third).
 */
function whyMissing(
  round: FetchRound,
  missing: readonly SelectedBucket[],
  deadlineReached: boolean,
  maxBytesPerCall: number,
): string {
  // "None of the 1 buckets" read badly (an error texts audit): one bucket is named as one.
  const one = missing.length === 1;
  const none = one
    ? "The bucket holding this query's data"
    : `None of the ${missing.length} buckets holding this query's data`;
  const can = one ? 'cannot' : 'can';
  const was = one ? 'was not' : 'was';
  const tooLarge = (chosen: SelectedBucket) =>
    chosen.toAsk.length > 0 && chosen.toAsk.every((holder) => holder.bytes > maxBytesPerCall);
  if (round.calls.length === 0) {
    if (missing.every(tooLarge))
      return `${none} ${can} be fetched: every holder claims more than a miner is asked to send at once (${maxBytesPerCall} bytes, half of MINER_MAX_RESPONSE_BYTES), and the store has no copy; ask for a shorter range or another label`;
    if (deadlineReached)
      return `${none} ${was} fetched in time: another query of this gateway is fetching ${one ? 'it' : 'them'}; ask again shortly, it will be answered from what they send`;
    const claims = missing.some(tooLarge)
      ? ' (the holders of some claim more than a miner is asked to send at once)'
      : '';
    // As the live path says it, so that a client knows when to ask again (a budgets audit's
    // finding: only this answer left it guessing).
    const when = round.firstCallAt
      ? `; the first call frees up at ${round.firstCallAt.toISOString()}`
      : '';
    return `${none} ${can} be fetched now${claims}: ${one ? 'its' : 'their'} holders' call budgets are spent, they refused recently, or what they sent within the hour failed the checks, and the store has no copy${when}`;
  }
  const asked = round.calls.length;
  // Each holder asked had a call left when the round was planned, and other queries spent it
  // before its turn: "no miner answered" read as the miners' failure (a scale audit's finding).
  const reports = round.calls.map((call) => round.reports.get(call));
  if (!deadlineReached && reports.every((report) => report?.budgetSpent))
    return `${none} ${can} be fetched now: other queries of this gateway spent the calls left in ${one ? 'its' : 'their'} holders' budgets (${asked} asked) before this one's turn, and the store has no copy; ask again later`;
  // The deadline is named only when it is what every call failed by (one unfinished at it did),
  // as the live path says it: two 500s answered at once read "not in time" (an error texts
  // audit's finding, left by the first pass).
  const byDeadline = reports.every(
    (report) => report === undefined || report.failure === 'timeout',
  );
  return deadlineReached && byDeadline
    ? `No miner holding this query's data answered in time (${asked} asked)`
    : `No miner holding this query's data answered with it (${asked} asked; meta.miners_failed.reasons says why)`;
}

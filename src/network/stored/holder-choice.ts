import { BucketHolding } from '../index/miner-index-read.repository';
import { BucketKey } from '../protocol';
import { MAX_CONTENT_BUCKETS } from '../sn13/messages';

/**
 * Which miners are asked for which buckets: each call to a holder carries as many buckets as it
 * can (GetContentsByBuckets takes up to 100), because calls, not buckets, are what a miner's
 * budget counts. Pure: budgets and refusals are read by the caller.
 */

export type StoredSynapse = 'GetContentsByBuckets' | 'GetDataEntityBucket';

/** What the holder's index claims for one bucket asked of it. */
export interface AskedBucket {
  bucket: BucketKey;
  claimedBytes: number;
}

/** The miner a call goes to. */
export type CallHolder = Pick<
  BucketHolding,
  'uid' | 'hotkey' | 'coldkey' | 'axonUrl' | 'credibility'
>;

export interface PlannedCall {
  holder: CallHolder;
  synapse: StoredSynapse;
  buckets: AskedBucket[];
  /** Claimed bytes of its buckets together. */
  bytes: number;
}

export interface BucketToFetch {
  bucket: BucketKey;
  /** Holders that may be asked, most credible first. */
  holders: BucketHolding[];
}

export interface HolderChoiceOptions {
  /** Calls each holder may still receive, by hotkey and synapse (absent: none). */
  callsLeft: (hotkey: string, synapse: StoredSynapse) => number;
  /** Calls one query may make at most. */
  maxCalls: number;
  /** Claimed bytes one call may carry (its answer must stay under the response cap). */
  maxBytesPerCall: number;
  /** Ask a second holder (another coldkey) for each bucket where the budget allows. */
  corroborate: boolean;
}

export interface HolderChoice {
  calls: PlannedCall[];
  /** Buckets no holder could be asked for (budget spent, over the size cap, call cap). */
  unassigned: BucketKey[];
}

/**
 * A holder is eligible when its credibility is at least this share of the most credible
 * eligible holder's: among those, one already carrying a call is preferred, so that buckets
 * share calls, but never at the price of a much less credible miner.
 */
export const CREDIBILITY_SLACK = 0.8;

/**
 * A corroborating copy is asked only of a holder with more than this many calls left (half of
 * the 8 an hour it grants beside a validator): the primary copies of later queries come first.
 * With a reserve of 1, two gateways answering 300 distinct queries over an hour on a devnet of
 * 6 miners spent every miner's hour on the first ~11 queries, mostly on second copies
 * (test/e2e/stored-budgets.e2e-spec.ts).
 */
export const CORROBORATION_RESERVE = 4;

/**
 * For each bucket, newest first: a primary holder, and where the budget allows a second one
 * of another coldkey (the same bucket from two operators, as the live quorum asks several).
 * Unlabeled buckets go through GetDataEntityBucket, one bucket a call: GetContentsByBuckets
 * answers them empty (miners look a null label up as the string 'NULL').
 */
export function chooseHolders(
  buckets: readonly BucketToFetch[],
  options: HolderChoiceOptions,
): HolderChoice {
  const calls: PlannedCall[] = [];
  const opened = new Map<string, number>();
  const coldkeysCalled = new Map<string, number>();
  const unassigned: BucketKey[] = [];
  const key = (hotkey: string, synapse: StoredSynapse) => `${synapse}|${hotkey}`;

  /** An open call to the holder with room for `bytes` more, if any. */
  const openCall = (holder: BucketHolding, synapse: StoredSynapse, bytes: number) =>
    synapse === 'GetDataEntityBucket'
      ? undefined
      : calls.find(
          (call) =>
            call.holder.uid === holder.uid &&
            call.synapse === synapse &&
            call.buckets.length < MAX_CONTENT_BUCKETS &&
            call.bytes + bytes <= options.maxBytesPerCall,
        );
  const canOpen = (holder: BucketHolding, synapse: StoredSynapse, reserve: number) =>
    calls.length < options.maxCalls &&
    options.callsLeft(holder.hotkey, synapse) - (opened.get(key(holder.hotkey, synapse)) ?? 0) >
      reserve;

  const assign = (
    bucket: BucketKey,
    holders: readonly BucketHolding[],
    synapse: StoredSynapse,
    reserve: number,
  ): BucketHolding | undefined => {
    const usable = holders.filter(
      (holder) =>
        holder.bytes > 0 &&
        holder.bytes <= options.maxBytesPerCall &&
        (openCall(holder, synapse, holder.bytes) !== undefined ||
          canOpen(holder, synapse, reserve)),
    );
    if (usable.length === 0) return undefined;
    const best = Math.max(...usable.map((holder) => holder.credibility));
    const [chosen] = usable
      .filter((holder) => holder.credibility >= best * CREDIBILITY_SLACK)
      .sort(
        (a, b) =>
          Number(openCall(b, synapse, b.bytes) !== undefined) -
            Number(openCall(a, synapse, a.bytes) !== undefined) ||
          (coldkeysCalled.get(a.coldkey) ?? 0) - (coldkeysCalled.get(b.coldkey) ?? 0) ||
          b.credibility - a.credibility ||
          b.bytes - a.bytes ||
          a.uid - b.uid,
      );
    let call = openCall(chosen, synapse, chosen.bytes);
    if (!call) {
      const { uid, hotkey, coldkey, axonUrl, credibility } = chosen;
      call = {
        holder: { uid, hotkey, coldkey, axonUrl, credibility },
        synapse,
        buckets: [],
        bytes: 0,
      };
      calls.push(call);
      opened.set(key(chosen.hotkey, synapse), (opened.get(key(chosen.hotkey, synapse)) ?? 0) + 1);
      coldkeysCalled.set(chosen.coldkey, (coldkeysCalled.get(chosen.coldkey) ?? 0) + 1);
    }
    call.buckets.push({ bucket, claimedBytes: chosen.bytes });
    call.bytes += chosen.bytes;
    return chosen;
  };

  // Every bucket's primary copy first: corroboration only takes what is left.
  const primaries = new Map<BucketToFetch, BucketHolding>();
  for (const entry of buckets) {
    const primary = assign(entry.bucket, entry.holders, synapseFor(entry.bucket), 0);
    if (primary) primaries.set(entry, primary);
    else unassigned.push(entry.bucket);
  }
  if (options.corroborate)
    for (const [{ bucket, holders }, primary] of primaries) {
      if (synapseFor(bucket) === 'GetDataEntityBucket') continue;
      const others = holders.filter(
        (holder) => holder.uid !== primary.uid && holder.coldkey !== primary.coldkey,
      );
      assign(bucket, others, 'GetContentsByBuckets', CORROBORATION_RESERVE);
    }
  return { calls, unassigned };
}

/**
 * GetDataEntityBucket's budget is the scarcer one (2 an hour): unlabeled buckets get no second
 * copy.
 */
function synapseFor(bucket: BucketKey): StoredSynapse {
  return bucket.label === null ? 'GetDataEntityBucket' : 'GetContentsByBuckets';
}

import { compareText } from '../../common/compare-text';
import { DataItem } from '../protocol';
import { BucketCheckResult } from './bucket-check';
import { BucketDelivery, BucketFetch } from '../stored/item-store';
import { MinerFailureReason } from '../query-failures';

// What the bucket reader answers: a fetch's outcome, and query_bucket's answer.

export type FetchOutcome =
  | {
      ok: true;
      check: BucketCheckResult;
      delivery: BucketDelivery;
      /**
       * It sent entities and the checks dropped every one (isDroppedWhole): not kept, and no
       * answer to query_bucket, which is not "the bucket is empty".
       */
      droppedWhole: boolean;
    }
  | {
      ok: false;
      reason: MinerFailureReason;
      message: string;
      /** What the failure said of the miner's credibility (null: nothing). */
      score: number | null;
      /** The miner answered the call with a refusal (refusedWhenSent). */
      refused: boolean;
      /** Refused unsent: other requests spent its last calls meanwhile (isBudgetSpent). */
      budgetSpent: boolean;
      /** Set when the miner's last call is kept for the spot checks: when one frees up. */
      keptForChecks?: { freeAt: Date | null };
    };

export type BucketAnswer =
  | {
      status: 'success';
      /** True when answered from an earlier fetch, without calling a miner now. */
      cached: boolean;
      miner: { uid: number; hotkey: string };
      label: string | null;
      claimedBytes: number;
      fetchedAt: Date;
      items: DataItem[];
    }
  | { status: 'error'; message: string };

/** `cached`: the fetch was made before this request. */
export function answerFrom(
  fetch: Pick<BucketFetch, 'bucket' | 'minerUid' | 'minerHotkey' | 'claimedBytes' | 'fetchedAt'>,
  items: DataItem[],
  cached: boolean,
): BucketAnswer {
  return {
    status: 'success',
    cached,
    miner: { uid: fetch.minerUid, hotkey: fetch.minerHotkey },
    label: fetch.bucket.label,
    claimedBytes: fetch.claimedBytes,
    fetchedAt: fetch.fetchedAt,
    items,
  };
}

/** A fresh delivery's items in the store's order (datetime, then uri, descending). */
export function newestFirst(delivery: BucketDelivery): DataItem[] {
  const byTime = (item: DataItem) => Date.parse(item.datetime);
  return delivery.items
    .map(({ item }) => item)
    .sort((a, b) => byTime(b) - byTime(a) || compareText(b.uri, a.uri));
}

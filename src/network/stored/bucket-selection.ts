import { coversClaim } from '../delivery-score';
import { BucketHolding } from '../index/miner-index-read.repository';
import { BucketKey, bucketStart, timeBucketId } from '../protocol';
import { SourceId } from '../sources';
import { BucketFetch } from './item-store';

/**
 * Which buckets of a plan a query needs, newest first, and which of those the store already
 * answers. Pure: the service reads the index and the store, this decides.
 */

/** A bucket as the miner index knows it: its holders, most credible first. */
export interface IndexedBucket {
  bucket: BucketKey;
  holders: BucketHolding[];
}

export interface SelectedBucket extends IndexedBucket {
  /** True when the store answers it: no miner is asked. */
  fromStore: boolean;
  /**
   * Holders worth asking (those whose current claim was not fetched yet), when not from the store.
   */
  toAsk: BucketHolding[];
  /**
   * Holders whose current claim no up-to-date fetch read, from the store or not: miners scrape on
   * their own, so each may hold posts the stored copies lack (the answer is `partial` while one
   * stays unread: stored-answer.ts).
   */
  unfetched: BucketHolding[];
  estimatedItems: number;
}

export interface SelectionOptions {
  now: Date;
  /** How long a fetch of the current (still filling) hour stays fresh. */
  currentHourTtlMs: number;
  /** Bytes per stored record, to estimate a bucket's items from its claimed size. */
  recordBytes: number;
  /** Items wanted; buckets are taken, newest first, until their estimates reach it. */
  target: number;
  /** The largest claim a holder can be asked for (holder-choice's `maxBytesPerCall`). */
  maxClaimBytes: number;
}

/**
 * Bytes of one stored record when the store has nothing to measure yet: an `XContent` or a
 * `RedditContent` serialized by a miner is about a kilobyte (the devnet's are 0.6–1.5 kB).
 */
export const DEFAULT_RECORD_BYTES = 1000;

/** The index's rows (newest first) as buckets; rows of one bucket are adjacent. */
export function groupHoldings(source: SourceId, rows: readonly BucketHolding[]): IndexedBucket[] {
  const buckets: IndexedBucket[] = [];
  for (const row of rows) {
    const last = buckets.at(-1);
    if (last && last.bucket.timeBucket === row.timeBucket && last.bucket.label === row.label)
      last.holders.push(row);
    else
      buckets.push({
        bucket: { source, label: row.label, timeBucket: row.timeBucket },
        holders: [row],
      });
  }
  return buckets;
}

/** Bytes per record as the store measured them (what was fetched), else the default. */
export function recordBytesOf(fetches: readonly BucketFetch[]): number {
  let bytes = 0;
  let items = 0;
  for (const fetch of fetches) {
    bytes += fetch.bytes;
    items += fetch.itemCount;
  }
  return items > 0 ? Math.max(1, bytes / items) : DEFAULT_RECORD_BYTES;
}

/**
 * Takes buckets newest first until the items they are estimated to hold reach the target.
 * A bucket is answered by the store when a fetch of it is up to date and complete, or when
 * every holder's current claim was fetched already (asking again would teach nothing).
 * A fetch is up to date while the holder's index still claims the size it claimed when
 * fetched (a past hour: miners re-send their index about hourly), or, for the current hour,
 * for `currentHourTtlMs`. A fetch made while its hour ran keeps the current hour's limit after
 * the hour ends: the claim it was compared with was read before it, so the same claim says
 * nothing of the rest of the hour, and the hour's last minutes were missing until the next
 * index sync changed the claim (a time audit's finding). Only the holder's own fetches count:
 * its uid and hotkey (a uid re-registered by another hotkey is another miner). Complete: it
 * kept the claimed bytes, or more, or less by no more than the tolerance (coversClaim).
 */
export function selectBuckets(
  buckets: readonly IndexedBucket[],
  fetches: readonly BucketFetch[],
  options: SelectionOptions,
): { selected: SelectedBucket[]; estimatedItems: number } {
  const byBucket = new Map<string, BucketFetch[]>();
  for (const fetch of fetches) {
    const key = bucketKeyOf(fetch.bucket);
    byBucket.set(key, [...(byBucket.get(key) ?? []), fetch]);
  }
  const currentHour = timeBucketId(options.now);
  const selected: SelectedBucket[] = [];
  let estimatedItems = 0;
  for (const indexed of buckets) {
    if (estimatedItems >= options.target) break;
    const { bucket, holders } = indexed;
    const current = bucket.timeBucket >= currentHour;
    const hourEnd = bucketStart(bucket.timeBucket + 1).getTime();
    const upToDate = (byBucket.get(bucketKeyOf(bucket)) ?? []).filter((fetch) => {
      const holder = holders.find(
        (candidate) => candidate.uid === fetch.minerUid && candidate.hotkey === fetch.minerHotkey,
      );
      if (holder === undefined) return false;
      if (current || fetch.fetchedAt.getTime() < hourEnd)
        return options.now.getTime() - fetch.fetchedAt.getTime() < options.currentHourTtlMs;
      return holder.bytes === fetch.claimedBytes;
    });
    const fetched = new Set(upToDate.map((fetch) => fetch.minerUid));
    const unfetched = holders.filter((holder) => !fetched.has(holder.uid) && holder.bytes > 0);
    const fromStore = upToDate.some(isComplete) || unfetched.length === 0;
    const items = fromStore
      ? Math.max(0, ...upToDate.map((fetch) => fetch.itemCount))
      : Math.ceil(askableClaim(holders, options.maxClaimBytes) / options.recordBytes);
    selected.push({
      ...indexed,
      fromStore,
      toAsk: fromStore ? [] : unfetched,
      unfetched,
      estimatedItems: items,
    });
    estimatedItems += items;
  }
  return { selected, estimatedItems };
}

/**
 * The claim a bucket's items are estimated from: the lower median of the claims of holders that
 * can be asked (0 when none can: nothing will be fetched). Not the largest claim: one holder
 * inflating its claim would make a bucket look like many and the planner pick too few buckets.
 */
export function askableClaim(holders: readonly BucketHolding[], maxClaimBytes: number): number {
  const claims = holders
    .map((holder) => holder.bytes)
    .filter((bytes) => bytes > 0 && bytes <= maxClaimBytes)
    .sort((a, b) => a - b);
  return claims.length === 0 ? 0 : claims[Math.floor((claims.length - 1) / 2)];
}

export function bucketKeyOf(bucket: BucketKey): string {
  return JSON.stringify([bucket.source, bucket.label, bucket.timeBucket]);
}

function isComplete(fetch: BucketFetch): boolean {
  return coversClaim(fetch.claimedBytes, fetch.bytes);
}

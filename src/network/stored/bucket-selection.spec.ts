import { BucketHolding } from '../index/miner-index-read.repository';
import { MAX_BUCKET_BYTES, timeBucketId } from '../protocol';
import {
  DEFAULT_RECORD_BYTES,
  groupHoldings,
  IndexedBucket,
  recordBytesOf,
  selectBuckets,
} from './bucket-selection';
import { BucketFetch } from './item-store';

const NOW = new Date('2026-01-15T12:30:00Z');
const CURRENT = timeBucketId(NOW);
const TTL = 300_000;

function holding(timeBucket: number, uid: number, bytes: number, label = '#tao'): BucketHolding {
  return {
    timeBucket,
    label,
    uid,
    hotkey: `hk${uid}`,
    coldkey: `ck${uid}`,
    axonUrl: `http://127.0.0.1:${9000 + uid}`,
    credibility: 0.9,
    bytes,
  };
}

function fetchOf(
  timeBucket: number,
  uid: number,
  claimedBytes: number,
  bytes: number,
  itemCount: number,
  fetchedAt = new Date(NOW.getTime() - 60_000),
): BucketFetch {
  return {
    bucket: { source: 2, label: '#tao', timeBucket },
    minerUid: uid,
    minerHotkey: `hk${uid}`,
    fetchedAt,
    claimedBytes,
    itemCount,
    bytes,
  };
}

/** Hours CURRENT, CURRENT-1, … each held by miners 1 and 2 with 10 kB. */
function hours(count: number): IndexedBucket[] {
  return groupHoldings(
    2,
    Array.from({ length: count }, (_, offset) => [
      holding(CURRENT - offset, 1, 10_000),
      holding(CURRENT - offset, 2, 10_000),
    ]).flat(),
  );
}

const options = {
  now: NOW,
  currentHourTtlMs: TTL,
  recordBytes: 1000,
  target: 100,
  maxClaimBytes: 8 * 1024 * 1024,
};

describe(selectBuckets.name, () => {
  it('groups index rows into buckets, newest first', () => {
    const buckets = groupHoldings(2, [
      holding(CURRENT, 1, 5),
      holding(CURRENT, 2, 5),
      holding(CURRENT, 1, 5, '#btc'),
      holding(CURRENT - 1, 3, 5),
    ]);
    expect(
      buckets.map(({ bucket, holders }) => [bucket.label, bucket.timeBucket, holders.length]),
    ).toEqual([
      ['#tao', CURRENT, 2],
      ['#btc', CURRENT, 1],
      ['#tao', CURRENT - 1, 1],
    ]);
  });

  it('takes the newest buckets until the sizes the index claims cover the target', () => {
    // 10 kB at 1 kB a record: 10 items a bucket, so 25 items need 3 buckets.
    const { selected, estimatedItems } = selectBuckets(hours(24), [], { ...options, target: 25 });
    expect(selected.map((entry) => entry.bucket.timeBucket)).toEqual([
      CURRENT,
      CURRENT - 1,
      CURRENT - 2,
    ]);
    expect(estimatedItems).toBe(30);
    expect(selected.every((entry) => !entry.fromStore && entry.toAsk.length === 2)).toBe(true);
  });

  it('estimates from the claims of holders that can be asked, not from one inflated claim', () => {
    // A third holder claims the subnet's cap (too large to ask) in all 24 hours, a fourth 8 MiB
    // (askable, but one against two): 50 items still need 5 buckets of 10.
    const withLiars = (liarBytes: number[]) =>
      groupHoldings(
        2,
        Array.from({ length: 24 }, (_, offset) => [
          holding(CURRENT - offset, 1, 10_000),
          holding(CURRENT - offset, 2, 10_000),
          ...liarBytes.map((bytes, n) => holding(CURRENT - offset, 3 + n, bytes)),
        ]).flat(),
      );
    for (const liars of [[MAX_BUCKET_BYTES], [MAX_BUCKET_BYTES, options.maxClaimBytes]]) {
      const { selected } = selectBuckets(withLiars(liars), [], { ...options, target: 50 });
      expect(selected.map((entry) => entry.estimatedItems)).toEqual([10, 10, 10, 10, 10]);
    }
  });

  it('estimates no items for a bucket no holder can be asked for, and moves on', () => {
    const buckets = groupHoldings(2, [
      holding(CURRENT, 3, MAX_BUCKET_BYTES),
      holding(CURRENT - 1, 1, 10_000),
    ]);
    const { selected } = selectBuckets(buckets, [], { ...options, target: 10 });
    expect(selected.map((entry) => entry.estimatedItems)).toEqual([0, 10]);
  });

  it('serves a past hour from the store while its holder still claims the size it was fetched at', () => {
    const past = CURRENT - 1;
    const fresh = selectBuckets(hours(2).slice(1), [fetchOf(past, 1, 10_000, 10_000, 8)], options);
    expect(fresh.selected[0]).toMatchObject({ fromStore: true, toAsk: [], estimatedItems: 8 });

    const grown = selectBuckets(hours(2).slice(1), [fetchOf(past, 1, 9_000, 9_000, 8)], options);
    expect(grown.selected[0].fromStore).toBe(false);
    expect(grown.selected[0].toAsk.map((holder) => holder.uid)).toEqual([1, 2]);
  });

  it('serves the current hour from the store for the TTL only', () => {
    const young = fetchOf(CURRENT, 1, 10_000, 10_000, 10, new Date(NOW.getTime() - TTL + 1000));
    const old = fetchOf(CURRENT, 1, 10_000, 10_000, 10, new Date(NOW.getTime() - TTL - 1000));
    expect(selectBuckets(hours(1), [young], options).selected[0].fromStore).toBe(true);
    expect(selectBuckets(hours(1), [old], options).selected[0].fromStore).toBe(false);
  });

  // Its claim was read before the fetch, so an equal claim says nothing of the rest of the
  // hour: the store answered it as complete until the next index sync (a time audit's finding).
  it('trusts a fetch made while its hour ran for the TTL only, once the hour is over', () => {
    const past = CURRENT - 1;
    const hourEnd = (past + 1) * 3_600_000;
    const during = fetchOf(past, 1, 10_000, 10_000, 8, new Date(hourEnd - 60_000));
    const justAfter = { ...options, now: new Date(hourEnd + TTL - 61_000) };
    const later = { ...options, now: new Date(hourEnd + TTL) };
    const both = [during, fetchOf(past, 2, 10_000, 10_000, 8, new Date(hourEnd - 60_000))];
    expect(selectBuckets(hours(2).slice(1), both, justAfter).selected[0].fromStore).toBe(true);
    expect(selectBuckets(hours(2).slice(1), both, later).selected[0]).toMatchObject({
      fromStore: false,
      toAsk: [expect.objectContaining({ uid: 1 }), expect.objectContaining({ uid: 2 })],
    });
    // Fetched after the hour ended: its claim holds it, however long ago.
    const after = fetchOf(past, 1, 10_000, 10_000, 8, new Date(hourEnd + 1));
    expect(selectBuckets(hours(2).slice(1), [after], later).selected[0].fromStore).toBe(true);
  });

  // A uid re-registered by another hotkey: the old miner's fetch is not the new one's.
  it("does not take a fetch of a uid's previous hotkey for its current holder's", () => {
    const past = CURRENT - 1;
    const previous = { ...fetchOf(past, 1, 10_000, 10_000, 8), minerHotkey: 'hk-previous' };
    const [selected] = selectBuckets(hours(2).slice(1), [previous], options).selected;
    expect(selected.fromStore).toBe(false);
    expect(selected.unfetched.map((holder) => holder.uid)).toEqual([1, 2]);
  });

  it('asks another holder when the stored fetch fell short of its claim, never the same one again', () => {
    const past = CURRENT - 1;
    const short = selectBuckets(hours(2).slice(1), [fetchOf(past, 1, 10_000, 2_000, 2)], options);
    expect(short.selected[0].fromStore).toBe(false);
    expect(short.selected[0].toAsk.map((holder) => holder.uid)).toEqual([2]);

    const bothShort = selectBuckets(
      hours(2).slice(1),
      [fetchOf(past, 1, 10_000, 2_000, 2), fetchOf(past, 2, 10_000, 1_000, 1)],
      options,
    );
    expect(bothShort.selected[0]).toMatchObject({ fromStore: true, estimatedItems: 2 });
  });

  it('answers from the store a past hour whose fetch kept 90 % of its claim, not less', () => {
    // Counted complete, the other holder is not asked for the same bucket again.
    const past = CURRENT - 1;
    const within = selectBuckets(hours(2).slice(1), [fetchOf(past, 1, 10_000, 9_000, 9)], options);
    expect(within.selected[0]).toMatchObject({ fromStore: true, toAsk: [] });
    const short = selectBuckets(hours(2).slice(1), [fetchOf(past, 1, 10_000, 8_999, 9)], options);
    expect(short.selected[0].toAsk.map((holder) => holder.uid)).toEqual([2]);
  });

  // Miners scrape on their own: holders of one bucket hold different posts. A bucket answered
  // from one holder's copy still lacks the others', and the answer must not call itself complete.
  it('lists the holders whose current claim no fetch read, even when the store answers the bucket', () => {
    const past = CURRENT - 1;
    const buckets = groupHoldings(2, [
      holding(past, 1, 10_000),
      holding(past, 2, 10_000),
      holding(past, 3, 4_000),
      holding(past, 4, 0),
    ]);
    const { selected } = selectBuckets(buckets, [fetchOf(past, 1, 10_000, 10_000, 10)], options);
    expect(selected[0]).toMatchObject({ fromStore: true, toAsk: [] });
    expect(selected[0].unfetched.map((holder) => holder.uid)).toEqual([2, 3]);

    const all = [1, 2, 3].map((uid) => fetchOf(past, uid, uid === 3 ? 4_000 : 10_000, 1_000, 1));
    expect(selectBuckets(buckets, all, options).selected[0].unfetched).toEqual([]);
  });

  it('treats a current-hour fetch exactly the TTL old as stale', () => {
    const edge = fetchOf(CURRENT, 1, 10_000, 10_000, 10, new Date(NOW.getTime() - TTL));
    expect(selectBuckets(hours(1), [edge], options).selected[0].fromStore).toBe(false);
  });

  it('ignores fetches from miners that no longer hold the bucket', () => {
    const past = CURRENT - 1;
    const gone = selectBuckets(hours(2).slice(1), [fetchOf(past, 7, 10_000, 10_000, 10)], options);
    expect(gone.selected[0].fromStore).toBe(false);
  });

  it('estimates records from what the store measured, else a documented default', () => {
    expect(recordBytesOf([])).toBe(DEFAULT_RECORD_BYTES);
    expect(recordBytesOf([fetchOf(1, 1, 0, 3_000, 2), fetchOf(2, 1, 0, 1_000, 2)])).toBe(1000);
    expect(recordBytesOf([fetchOf(1, 1, 0, 0, 0)])).toBe(DEFAULT_RECORD_BYTES);
  });
});

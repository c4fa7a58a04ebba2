import { DataSource } from 'typeorm';
import { Source } from '../../src/common/source';
import { HASHTAGS, SUBREDDITS } from '../../src/devnet/vocabulary';
import { MAX_DATA_AGE_DAYS, normalizeLabel } from '../../src/network/protocol';
import { toSourceId } from '../../src/network/sources';
import { StoredItemQuery } from '../../src/network/stored/item-store';
import { SEEDED_HOT_LABELS } from './item-store-seed';

/**
 * The queries of `bench:on-demand --stored`: store hits on labels both the seeded item store
 * and the devnet hold, and first fetches on the devnet's other labels, each over its own day so
 * that no bucket is fetched twice.
 */

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

export interface LabelOf {
  source: Source;
  label: string;
}

/** The devnet's labels, as miners file them (lower-cased; subreddits as `r/name`). */
const DEVNET_LABELS: LabelOf[] = [
  ...HASHTAGS.map(({ tag }) => ({ source: 'x' as const, label: normalizeLabel(tag) })),
  ...SUBREDDITS.map(({ name }) => ({
    source: 'reddit' as const,
    label: `r/${name.toLowerCase()}`,
  })),
];
const seeded = new Set(SEEDED_HOT_LABELS.map(({ label }) => label));

/** Hot labels of the seeded store that devnet miners index too: their hours get fresh fetches. */
export const STORE_HIT_LABELS = DEVNET_LABELS.filter(({ label }) => seeded.has(label));
/** The devnet's other labels: the store has no fetch of them, so a first query fetches. */
export const FIRST_FETCH_LABELS = DEVNET_LABELS.filter(({ label }) => !seeded.has(label));

/** One query as sent to POST /api/v1/on_demand_data_request. */
export interface QueryBody {
  source: Source;
  keywords: string[];
  start_date?: string;
  end_date?: string;
  limit: number;
}

export interface StoreHitQuery {
  /** The kind of time range (rows of the report). */
  range: string;
  body: QueryBody;
  /** The same question as ItemStore.find reads it (the answer's page, no service around it). */
  find: StoredItemQuery;
}

/** Time ranges of store hits; `random` in [0, 1) moves the window so reads differ. */
const RANGES: { name: string; window: (now: number, random: number) => [number | null, number] }[] =
  [
    { name: 'no dates (30 days, newest first)', window: (now) => [null, now] },
    {
      name: 'last 24 h, end at a random minute',
      window: (now, random) => {
        const end = now - Math.floor(random * 60) * 60_000;
        return [end - DAY_MS, end];
      },
    },
    {
      name: 'one day, 6-7 days ago',
      window: (now, random) => {
        const end = now - 6 * DAY_MS - Math.floor(random * 24) * HOUR_MS;
        return [end - DAY_MS, end];
      },
    },
    {
      name: '6 hours, 3-4 weeks ago',
      window: (now, random) => {
        const end = now - 21 * DAY_MS - Math.floor(random * 7 * 24) * HOUR_MS;
        return [end - 6 * HOUR_MS, end];
      },
    },
  ];
export const RANGE_NAMES = RANGES.map((range) => range.name);

/** The `index`-th store hit: every range of a label, then the next label. */
export function storeHitQuery(index: number, now: Date, random: number): StoreHitQuery {
  const range = RANGES[index % RANGES.length];
  const { source, label } =
    STORE_HIT_LABELS[Math.floor(index / RANGES.length) % STORE_HIT_LABELS.length];
  const [start, end] = range.window(now.getTime(), random);
  const horizon = now.getTime() - MAX_DATA_AGE_DAYS * DAY_MS;
  return {
    range: range.name,
    body: {
      source,
      keywords: [label],
      ...(start === null ? {} : { start_date: new Date(start).toISOString() }),
      ...(end === now.getTime() ? {} : { end_date: new Date(end).toISOString() }),
      limit: 100,
    },
    find: {
      source: toSourceId(source),
      labels: [label],
      from: new Date(start ?? horizon),
      to: new Date(end),
      usernames: [],
      limit: 100,
    },
  };
}

/**
 * The `index`-th first fetch: label after label, then the day before, so that two first
 * fetches never share a bucket (day d = the 24 whole hours ending d days before this hour).
 */
export function firstFetchQuery(index: number, now: Date): { body: QueryBody; label: string } {
  const { source, label } = FIRST_FETCH_LABELS[index % FIRST_FETCH_LABELS.length];
  const day = Math.floor(index / FIRST_FETCH_LABELS.length);
  if (day >= 29) throw new Error(`at most ${29 * FIRST_FETCH_LABELS.length} first fetches`);
  const end = Math.floor(now.getTime() / HOUR_MS) * HOUR_MS - day * DAY_MS;
  const body = {
    source,
    keywords: [label],
    start_date: new Date(end - DAY_MS).toISOString(),
    // The last millisecond of the window: its next hour belongs to the next query.
    end_date: new Date(end - 1).toISOString(),
    limit: 100,
  };
  return { body, label };
}

/**
 * Marks every hour the miner index lists for the store-hit labels as fetched now from each of
 * its holders, complete (the bytes the index claims) and holding the items the seeded store has
 * in that hour: what the store would say after those buckets were fetched. Returns the rows.
 */
export async function seedFreshFetches(dataSource: DataSource): Promise<number> {
  const labels = STORE_HIT_LABELS.map(({ label }) => label);
  // The items per hour in one pass over the labels' index ranges (a count per fetch row would
  // read each hour's range again: minutes at 10 million items).
  const [{ count }] = await dataSource.query<{ count: number }[]>(
    `WITH stored AS (
       SELECT source, label, floor(extract(epoch FROM datetime) / 3600)::int AS time_bucket,
              count(*)::int AS items
       FROM stored_items WHERE source IN (1, 2) AND label = ANY($1::text[])
       GROUP BY 1, 2, 3),
     inserted AS (
       INSERT INTO stored_bucket_fetches (source, label, time_bucket, miner_hotkey, miner_uid,
                                          fetched_at, claimed_bytes, item_count, bytes)
       SELECT i.source, l.value, i.time_bucket, m.hotkey, m.uid, now(), i.content_size_bytes,
              coalesce(s.items, 0), i.content_size_bytes
       FROM miner_index i JOIN labels l ON l.id = i.label_id JOIN miners m ON m.uid = i.miner_uid
       LEFT JOIN stored s
         ON s.source = i.source AND s.label = l.value AND s.time_bucket = i.time_bucket
       WHERE l.value = ANY($1::text[])
       RETURNING 1)
     SELECT count(*)::int AS count FROM inserted`,
    [labels],
  );
  return count;
}

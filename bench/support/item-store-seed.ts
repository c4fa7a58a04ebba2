/**
 * The item store at benchmark size: `seedItemStore` fills `stored_items` with N items (default
 * 10 million) spread over the network's 30 days, both sources, with a Zipf label distribution
 * (a few hot labels such as #bitcoin and r/bitcoin, thousands of cold ones, unlabeled X posts)
 * and skewed authors (the r-th most active has posts in proportion to 1/√r). Used by
 * bench:item-store and bench:on-demand --stored.
 * The rows are generated in SQL (generate_series), a day at a time, into a bare table that is
 * indexed after loading and then attached as that day's partition: building an index over
 * loaded rows is several times faster than maintaining it row by row.
 */
import { performance } from 'node:perf_hooks';
import { DataSource } from 'typeorm';
import { MAX_DATA_AGE_DAYS, timeBucketId } from '../../src/network/protocol';
import { dayOfBucket, partitionName } from '../../src/network/stored/item-partitions.repository';
import { runPool } from './measure';
import { formatInt, progress } from './report';

const DAY_MS = 86_400_000;
/** Miners that delivered the seeded items (hotkeys `5Miner0`..). */
const MINERS = 200;
const HOT_X = ['#bitcoin', '#crypto', '#ai', '#btc', '#eth', '#solana', '#trump', '#stocks'];
const HOT_REDDIT = ['r/bitcoin', 'r/wallstreetbets', 'r/cryptocurrency', 'r/politics'];
/** The hottest labels of each source, hottest first (the rest are `#tag<rank>`, `r/sub<rank>`). */
export const SEEDED_HOT_LABELS: { source: 'x' | 'reddit'; label: string }[] = [
  ...HOT_X.map((label) => ({ source: 'x' as const, label })),
  ...HOT_REDDIT.map((label) => ({ source: 'reddit' as const, label })),
];

export interface SeedOptions {
  items?: number;
  /** The newest item's time; items go back MAX_DATA_AGE_DAYS from it. Default: now. */
  now?: Date;
  /** Distinct labels per source (Zipf, rank 1 the hottest). */
  labels?: number;
  authors?: number;
  /** Share of X posts without a hashtag (the unlabeled bucket). */
  unlabeledShare?: number;
  /** Days loaded at once (each on its own connection). */
  concurrency?: number;
  seed?: number;
}

export interface SeedReport {
  items: number;
  partitions: number;
  seconds: number;
}

/**
 * Fills an empty store (no partition may exist for the days it seeds: it never replaces data).
 * With Zipf(1) over 2,000 labels the hottest label of each source holds about 9 % of its
 * labelled items: about 410 k #bitcoin posts in 10 million items, about 14 k a day.
 */
export async function seedItemStore(
  dataSource: DataSource,
  options: SeedOptions = {},
): Promise<SeedReport> {
  const started = performance.now();
  const items = options.items ?? 10_000_000;
  const end = (options.now ?? new Date()).getTime();
  const start = end - MAX_DATA_AGE_DAYS * DAY_MS;
  const firstDay = dayOfBucket(timeBucketId(new Date(start)));
  const lastDay = dayOfBucket(timeBucketId(new Date(end)));
  const days = Array.from({ length: lastDay - firstDay + 1 }, (_, index) => firstDay + index);

  const [{ count }] = await dataSource.query<{ count: number }[]>(
    `SELECT count(*)::int AS count FROM pg_inherits WHERE inhparent = 'stored_items'::regclass`,
  );
  if (count > 0) throw new Error('seedItemStore fills an empty store; stored_items has partitions');

  let next = 0;
  await runPool(days.length, options.concurrency ?? 2, async (index) => {
    const day = days[index];
    const from = Math.max(start, day * DAY_MS);
    const to = Math.min(end, (day + 1) * DAY_MS);
    const share = Math.round((items * (to - from)) / (end - start));
    const first = next;
    next += share;
    await seedDay(dataSource, day, from, to, first, share, options);
    progress(`item store: ${partitionName(day)} seeded (${formatInt(next)} items so far)`);
  });
  await dataSource.query('ANALYZE stored_items');
  return { items: next, partitions: days.length, seconds: (performance.now() - started) / 1000 };
}

/**
 * The miners who delivered the seeded items, two hotkeys to an operator: a read counts a copy's
 * operators through this table (find-items-sql.ts). Not for a store a devnet's metagraph fills.
 */
export async function seedMiners(dataSource: DataSource): Promise<void> {
  await dataSource.query(
    `INSERT INTO miners (uid, hotkey, coldkey, incentive, validator_permit, credibility, state,
                         updated_at)
     SELECT i, '5Miner' || i, '5Owner' || (i / 2), 0, false, 0.5, 'active', now()
     FROM generate_series(0, ${MINERS - 1}) AS i`,
  );
}

async function seedDay(
  dataSource: DataSource,
  day: number,
  from: number,
  to: number,
  first: number,
  count: number,
  options: SeedOptions,
): Promise<void> {
  const name = partitionName(day);
  const runner = dataSource.createQueryRunner();
  await runner.connect();
  try {
    await runner.query(`SET maintenance_work_mem = '256MB'`);
    await runner.query(`SELECT setseed($1)`, [(((options.seed ?? 17) * 7919 + day) % 1000) / 1000]);
    await runner.query(`CREATE TABLE ${name} (LIKE stored_items INCLUDING DEFAULTS)`);
    await runner.query(
      `INSERT INTO ${name}
       SELECT source, uri, time_bucket, datetime, label, username, item, content_bytes,
              ARRAY['5Miner' || (i % ${MINERS})], datetime + interval '2 hours', datetime + interval '3 hours'
       FROM (${itemsSql()}) AS items`,
      [
        first,
        from,
        to,
        options.labels ?? 2000,
        options.authors ?? 100_000,
        options.unlabeledShare ?? 0.1,
        count,
      ],
    );
    // The parent's key (migration StoredItemsLabelKey), built here so that attaching takes it.
    await runner.query(
      `ALTER TABLE ${name} ADD UNIQUE NULLS NOT DISTINCT (source, uri, time_bucket, label)`,
    );
    for (const columns of [
      'source, label, datetime DESC, uri DESC',
      'source, datetime DESC, uri DESC',
      'source, username, datetime DESC, uri DESC',
    ])
      await runner.query(`CREATE INDEX ON ${name} (${columns})`);
    // The bound as a constraint first, so that attaching does not scan the rows to prove it.
    const lower = day * 24;
    await runner.query(
      `ALTER TABLE ${name} ADD CONSTRAINT ${name}_bound CHECK (time_bucket >= ${lower} AND time_bucket < ${lower + 24})`,
    );
    await runner.query(
      `ALTER TABLE stored_items ATTACH PARTITION ${name} FOR VALUES FROM (${lower}) TO (${lower + 24})`,
    );
    await runner.query(`ALTER TABLE ${name} DROP CONSTRAINT ${name}_bound`);
    await runner.query(`VACUUM (ANALYZE) ${name}`);
  } finally {
    await runner.release();
  }
}

const X_TIME = `to_char(datetime AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
const quoted = (labels: string[]) => labels.map((label) => `'${label}'`).join(', ');

/**
 * The rows of one day, in layers: ids and sources ($1 first id, $7 count), then the random
 * draws (time in [$2, $3) ms rounded down to the minute, Zipf label rank over $4 labels, author
 * rank over $5 skewed as 1/√r, unlabeled X share $6), then names, then the item as the gateway
 * keeps it.
 */
function itemsSql(): string {
  return `
    SELECT i, source, datetime, label, username, time_bucket, content_bytes,
           CASE source WHEN 2 THEN 'https://x.com/' || username || '/status/' || i
                       ELSE 'https://www.reddit.com/' || label || '/comments/' || i || '/' END AS uri,
           CASE source WHEN 2 THEN jsonb_build_object(
             'uri', 'https://x.com/' || username || '/status/' || i,
             'datetime', ${X_TIME}, 'source', 'X', 'label', label, 'content', text,
             'user', jsonb_build_object('username', username, 'display_name', initcap(username),
               'id', (i % 100000)::text, 'verified', i % 9 = 0,
               'followers_count', i % 5000, 'following_count', i % 700),
             'tweet', jsonb_build_object('id', i::text, 'like_count', i % 300,
               'retweet_count', i % 40, 'reply_count', i % 25, 'quote_count', i % 5,
               'hashtags', CASE WHEN label IS NULL THEN '[]'::jsonb ELSE jsonb_build_array(label) END,
               'is_retweet', false, 'is_reply', i % 4 = 0, 'is_quote', false,
               'conversation_id', i::text),
             'media', '[]'::jsonb)
           ELSE jsonb_build_object(
             'uri', 'https://www.reddit.com/' || label || '/comments/' || i || '/',
             'datetime', ${X_TIME}, 'source', 'REDDIT', 'label', label, 'content', text,
             'id', 't3_' || i, 'url', 'https://www.reddit.com/' || label || '/comments/' || i || '/',
             'username', username, 'communityName', label, 'body', text, 'title', left(text, 60),
             'createdAt', ${X_TIME}, 'dataType', 'post', 'parentId', null)
           END AS item
    FROM (
      SELECT *, floor(extract(epoch FROM datetime) / 3600)::int AS time_bucket,
             300 + (i % 700)::int AS content_bytes,
             CASE WHEN label_rank IS NULL THEN NULL
                  WHEN source = 2 THEN coalesce((ARRAY[${quoted(HOT_X)}])[label_rank], '#tag' || label_rank)
                  ELSE coalesce((ARRAY[${quoted(HOT_REDDIT)}])[label_rank], 'r/sub' || label_rank) END AS label,
             'user' || author_rank AS username
      FROM (
        SELECT i, source,
               to_timestamp(floor(($2::float8 + random() * ($3::float8 - $2::float8)) / 60000) * 60) AS datetime,
               CASE WHEN source = 2 AND random() < $6::float8 THEN NULL
                    ELSE floor(exp(random() * ln($4::float8)))::int END AS label_rank,
               1 + floor($5::float8 * random() ^ 2)::int AS author_rank,
               repeat(md5(i::text) || ' ', 4) || 'stored post number ' || i AS text
        FROM (SELECT i, CASE WHEN i % 2 = 0 THEN 2 ELSE 1 END AS source
              FROM generate_series($1::bigint, $1::bigint + $7::bigint - 1) AS i) AS g) AS draws) AS named`;
}

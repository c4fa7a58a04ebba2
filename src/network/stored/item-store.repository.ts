import { Injectable } from '@nestjs/common';
import { compareText } from '../../common/compare-text';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { notErasedSql } from '../erased-authors';
import { authorOfItem, cutLabel, normalizeLabel, timeBucketId } from '../protocol';
import { SourceId } from '../sources';
import { findPageSql, PageRow } from './find-items-sql';
import { canonicalItem } from '../item-uri';
import { currentItemShape, StoredItemShape } from '../legacy-items';
import { dayOfBucket, ItemPartitionsRepository } from './item-partitions.repository';
import {
  BucketDelivery,
  BucketFetch,
  ItemStore,
  StoredItem,
  StoredItemQuery,
  StoredPage,
} from './item-store';

/**
 * Rows `find` reads at most per item asked for. An item's other rows (copies under other labels
 * or hours) are skipped; honest posts have one, so this never binds for them. A miner filing
 * posts under hundreds of labels made a read of any label page through all their copies (30,000
 * rows, 245 ms, for 100 posts under 300 labels: a hostile-miner audit's finding).
 */
const ROWS_READ_PER_ITEM = 8;

/** What an insert into a partitioned table says when no partition takes the row. */
const NO_PARTITION = '23514';

/** One item as its row is written: keys first, in the order rows are locked. */
interface ItemRow {
  source: SourceId;
  uri: string;
  timeBucket: number;
  datetime: string;
  label: string | null;
  username: string;
  json: string;
  contentBytes: number;
}

/**
 * The item store in Postgres (`stored_items`, partitioned by day, and
 * `stored_bucket_fetches`; see the ItemStore migration). A call's deliveries are one
 * statement (see saveSql): their items, merged by (source, uri, hour, label) with the miners
 * that sent them before, and their fetch rows (one transaction per bucket cost a first fetch of
 * a day of buckets tens of milliseconds after the slowest miner answered). A row is an item
 * filed under one label in one hour (migration StoredItemsLabelKey): a copy filed under another
 * label has a row of its own, so a miner filing real posts elsewhere cannot keep them out of
 * their own label's answers. The first record stored for a row is kept; later deliveries add
 * their miner and time only when their content agrees (contentOf), so a copy that differs
 * never counts as corroboration.
 */
@Injectable()
export class ItemStoreRepository extends ItemStore {
  private readonly partitions: ItemPartitionsRepository;

  constructor(@InjectDataSource() private readonly dataSource: DataSource) {
    super();
    this.partitions = new ItemPartitionsRepository(dataSource);
  }

  async save(...deliveries: BucketDelivery[]): Promise<void> {
    if (deliveries.length === 0) return;
    const [{ minerHotkey, fetchedAt }] = deliveries;
    if (
      deliveries.some(
        (delivery) =>
          delivery.minerHotkey !== minerHotkey ||
          delivery.fetchedAt.getTime() !== fetchedAt.getTime(),
      )
    )
      throw new Error('save keeps the deliveries of one call: one miner, one fetch time');
    const perBucket = deliveries.map((delivery) => ({ delivery, rows: itemRows(delivery) }));
    const rows = uniqueRows(perBucket.flatMap((entry) => entry.rows));
    const write = async () => {
      await this.partitions.ensure(new Set(rows.map((row) => dayOfBucket(row.timeBucket))));
      const { sql, parameters } = saveSql(minerHotkey, fetchedAt, rows, perBucket);
      await this.dataSource.query(sql, parameters);
    };
    await write().catch(async (error: { code?: string }) => {
      // A partition we knew was dropped meanwhile by another replica's retention run.
      if (error.code !== NO_PARTITION) throw error;
      this.partitions.forget();
      await write();
    });
  }

  async fetches(
    source: SourceId,
    labels: readonly (string | null)[],
    fromBucket: number,
    toBucket: number,
  ): Promise<BucketFetch[]> {
    const named = labels.filter((label): label is string => label !== null);
    if (labels.length === 0) return [];
    const rows = await this.dataSource.query<FetchRow[]>(
      `SELECT label, time_bucket, miner_uid, miner_hotkey, fetched_at, claimed_bytes, item_count, bytes
       FROM stored_bucket_fetches
       WHERE source = $1 AND time_bucket BETWEEN $2 AND $3
         AND (label = ANY($4::text[]) OR ($5 AND label IS NULL))
       ORDER BY time_bucket DESC, fetched_at DESC`,
      [source, fromBucket, toBucket, named, named.length < labels.length],
    );
    return rows.map((row) => ({
      bucket: { source, label: row.label, timeBucket: row.time_bucket },
      minerUid: row.miner_uid,
      minerHotkey: row.miner_hotkey,
      fetchedAt: row.fetched_at,
      claimedBytes: Number(row.claimed_bytes),
      itemCount: row.item_count,
      bytes: Number(row.bytes),
    }));
  }

  /**
   * Page after page until `limit` items are kept (one page unless duplicates were dropped): a
   * uri already kept in this call, or hidden by a row before the caller's cursor, is skipped.
   * At most ROWS_READ_PER_ITEM rows are read per item asked for; past them the call answers
   * what it kept, and says it was cut.
   */
  async findPage(query: StoredItemQuery): Promise<StoredPage> {
    if (query.labels?.length === 0) return { items: [], cut: false };
    const found: StoredItem[] = [];
    const seen = new Set<string>();
    let before = query.before;
    const maxRows = query.limit * ROWS_READ_PER_ITEM;
    let read = 0;
    let more = true;
    while (more && found.length < query.limit && read < maxRows) {
      const limit = query.limit - found.length;
      const { sql, parameters } = findPageSql({ ...query, before, limit }, query.before);
      const rows = await this.dataSource.query<PageRow[]>(sql, parameters);
      read += rows.length;
      for (const row of rows) {
        if (row.hidden || seen.has(row.uri)) continue;
        seen.add(row.uri);
        found.push({
          // Rows moved from bucket_fetches keep the shape of their release.
          item: currentItemShape(row.item as StoredItemShape),
          contentBytes: row.content_bytes,
          deliveredBy: row.delivered_by,
          fetchedAt: row.last_fetched_at,
        });
      }
      more = rows.length === limit;
      const last = rows[rows.length - 1];
      if (last) before = { datetime: last.datetime, uri: last.uri };
    }
    return { items: found, cut: more && found.length < query.limit };
  }

  /**
   * Drops whole days: every partition whose hours all lie before `date`'s day, and the fetches of
   * those hours, so that items and fetches go together. What remains of `date`'s own day before
   * `date` goes with the next day's run. Returns the days dropped.
   */
  async deleteBefore(date: Date): Promise<number> {
    const day = dayOfBucket(timeBucketId(date));
    const dropped = await this.partitions.dropBefore(day);
    await this.dataSource.query('DELETE FROM stored_bucket_fetches WHERE time_bucket < $1', [
      day * 24,
    ]);
    return dropped;
  }
}

interface FetchRow {
  label: string | null;
  time_bucket: number;
  miner_uid: number;
  miner_hotkey: string;
  fetched_at: Date;
  claimed_bytes: string;
  item_count: number;
  bytes: string;
}

/**
 * The delivery's items as rows, one per (uri, hour, label) (a second one in the same statement
 * would be an error for ON CONFLICT). The hour is the item's own (the checks made sure it is the
 * bucket's); an item whose time cannot be read has no place in a store partitioned by time and
 * is left out, as is one whose uri does not name it (the others are kept under their uri's
 * canonical form, so one post is one row however miners spell it): every path is checked
 * (the callers drop and count such items against the miner first), and this is the one place
 * none of them can skip. An erased author's items (`erased_authors`) are left out there too, by
 * the INSERT itself (saveSql).
 */
function itemRows(delivery: BucketDelivery): ItemRow[] {
  const rows = new Map<string, ItemRow>();
  for (const { item: offered, contentBytes } of delivery.items) {
    const item = canonicalItem(offered);
    const time = item ? Date.parse(item.datetime) : NaN;
    if (!item || Number.isNaN(time)) continue;
    const timeBucket = timeBucketId(new Date(time));
    const label = item.label === null ? null : cutLabel(normalizeLabel(item.label));
    const key = rowKey({ timeBucket, uri: item.uri, label });
    if (rows.has(key)) continue;
    rows.set(key, {
      source: delivery.bucket.source,
      uri: item.uri,
      timeBucket,
      datetime: new Date(time).toISOString(),
      label,
      username: authorOfItem(item),
      json: JSON.stringify(item),
      contentBytes,
    });
  }
  return [...rows.values()];
}

/** A row's key as text: hour, uri and label (null apart from every label, as the key has it). */
function rowKey(row: Pick<ItemRow, 'timeBucket' | 'uri' | 'label'>): string {
  return JSON.stringify([row.timeBucket, row.uri, row.label]);
}

/**
 * The rows of all the deliveries, one per (source, uri, hour, label), sorted by key so that
 * concurrent deliveries of the same items lock rows in the same order and cannot deadlock.
 */
function uniqueRows(rows: readonly ItemRow[]): ItemRow[] {
  const unique = new Map(rows.map((row) => [`${row.source} ${rowKey(row)}`, row]));
  return [...unique.values()].sort(
    (a, b) =>
      a.source - b.source ||
      a.timeBucket - b.timeBucket ||
      compareText(a.uri, b.uri) ||
      compareText(a.label ?? '', b.label ?? '') ||
      Number(a.label !== null) - Number(b.label !== null),
  );
}

/**
 * What two miners' copies of one post must agree on to corroborate it, as SQL over a stored
 * item's jsonb: what the post says and who said it where (X: text, author; Reddit: body, title,
 * author, subreddit, kind, parent), besides the label the row is filed under, which is in the
 * row's key (an X post's first hashtag). Left out, as they legitimately differ
 * between scrapes: the engagement counts, the author's profile, media urls (scrapers spell them
 * differently), the time (the hour is in the key; the entity keeps the second, the record the
 * minute) and the size.
 * Handles compare lower-cased and without `@`; rows of older releases carry `content`. Live
 * answers are merged by the same rule (`copyKey` in answer-checks.ts). Lower-cased in ASCII
 * (`C`) whatever the database's collation, as names are ASCII: under a Turkish one
 * `lower('IrinaK')` is `ırınak` and `lower('Bitcoin')` not `lower('BITCOIN')`, so a copy that
 * live answers count as the same disagreed (a collation audit).
 */
function contentOf(item: string): string {
  return `jsonb_build_array(coalesce(${item}->>'text', ${item}->>'content'),
            ltrim(lower(coalesce(${item}->'user'->>'username', ${item}->>'username') COLLATE "C"),
              '@'),
            ${item}->>'body', ${item}->>'title', lower(${item}->>'communityName' COLLATE "C"),
            ${item}->>'dataType', ${item}->>'parentId')`;
}

/**
 * The call's items and its fetch rows in one statement (one round trip, atomic as a transaction of
 * both; BEGIN, two statements and COMMIT were four on the path of a first fetch after its slowest
 * miner answered). Items: one INSERT from arrays, merged by (source, uri, hour, label) with the
 * miners that sent them before, when their content agrees (contentOf); a disagreeing copy leaves
 * the row as it was. An item of an author in the erased-authors register is not inserted
 * (notErasedSql, read in this statement: no read before it for an erasure to slip between); the
 * fetch rows still count what the miner delivered. Fetches: the newest per bucket and miner (a late
 * answer to an older call does not replace it); each delivery counts its own items (one per uri,
 * hour and label), whatever the others hold.
 */
function saveSql(
  minerHotkey: string,
  fetchedAt: Date,
  rows: readonly ItemRow[],
  perBucket: readonly { delivery: BucketDelivery; rows: ItemRow[] }[],
): { sql: string; parameters: unknown[] } {
  const column = <K extends keyof ItemRow>(key: K) => rows.map((row) => row[key]);
  // One row per bucket (the same bucket twice in one statement would be an ON CONFLICT error).
  const fetches = [
    ...new Map(
      perBucket.map((entry) => [JSON.stringify(entry.delivery.bucket), entry] as const),
    ).values(),
  ];
  const fetchColumn = <T>(pick: (entry: (typeof fetches)[number]) => T) => fetches.map(pick);
  const sql = `WITH items AS (
       INSERT INTO stored_items AS s (source, uri, time_bucket, datetime, label, username, item,
                                      content_bytes, delivered_by, first_fetched_at,
                                      last_fetched_at)
       SELECT u.source, u.uri, u.time_bucket, u.datetime, u.label, u.username, u.item::jsonb,
              u.content_bytes, ARRAY[$1::text], $2, $2
       FROM unnest($3::smallint[], $4::text[], $5::int[], $6::timestamptz[], $7::text[],
                   $8::text[], $9::text[], $10::int[])
         AS u(source, uri, time_bucket, datetime, label, username, item, content_bytes)
       WHERE ${notErasedSql('u.source', 'u.username')}
       ON CONFLICT (source, uri, time_bucket, label) DO UPDATE SET
         delivered_by = CASE WHEN $1 = ANY(s.delivered_by) THEN s.delivered_by
                             ELSE s.delivered_by || $1::text END,
         first_fetched_at = least(s.first_fetched_at, EXCLUDED.first_fetched_at),
         last_fetched_at = greatest(s.last_fetched_at, EXCLUDED.last_fetched_at)
       WHERE ${contentOf('s.item')} = ${contentOf('EXCLUDED.item')})
     INSERT INTO stored_bucket_fetches AS f (source, label, time_bucket, miner_hotkey, miner_uid,
                                             fetched_at, claimed_bytes, item_count, bytes)
     SELECT u.source, u.label, u.time_bucket, u.miner_hotkey, u.miner_uid, u.fetched_at,
            u.claimed_bytes, u.item_count, u.bytes
     FROM unnest($11::smallint[], $12::text[], $13::int[], $14::text[], $15::int[],
                 $16::timestamptz[], $17::bigint[], $18::int[], $19::bigint[])
       AS u(source, label, time_bucket, miner_hotkey, miner_uid, fetched_at, claimed_bytes,
            item_count, bytes)
     ON CONFLICT ON CONSTRAINT stored_bucket_fetches_key DO UPDATE SET
       miner_uid = EXCLUDED.miner_uid, fetched_at = EXCLUDED.fetched_at,
       claimed_bytes = EXCLUDED.claimed_bytes, item_count = EXCLUDED.item_count,
       bytes = EXCLUDED.bytes
     WHERE f.fetched_at <= EXCLUDED.fetched_at`;
  const parameters = [
    minerHotkey,
    fetchedAt,
    column('source'),
    column('uri'),
    column('timeBucket'),
    column('datetime'),
    column('label'),
    column('username'),
    column('json'),
    column('contentBytes'),
    fetchColumn(({ delivery }) => delivery.bucket.source),
    fetchColumn(({ delivery }) => delivery.bucket.label),
    fetchColumn(({ delivery }) => delivery.bucket.timeBucket),
    fetchColumn(({ delivery }) => delivery.minerHotkey),
    fetchColumn(({ delivery }) => delivery.minerUid),
    fetchColumn(({ delivery }) => delivery.fetchedAt),
    fetchColumn(({ delivery }) => delivery.claimedBytes),
    fetchColumn(({ rows: own }) => own.length),
    fetchColumn(({ rows: own }) => own.reduce((sum, row) => sum + row.contentBytes, 0)),
  ];
  return { sql, parameters };
}

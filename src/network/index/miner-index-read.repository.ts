import { IndexFreshness } from '../network-status';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { ACTIVE_SQL } from '../miner.entity';
import { SourceId } from '../sources';
import { IndexRow } from './compressed-index';

export interface LabelSizeRow {
  label_value: string;
  content_size_bytes: string;
  adj_content_size_bytes: number;
}

export interface AgeSizeRow {
  time_bucket_id: number;
  content_size_bytes: string;
  adj_content_size_bytes: number;
}

/**
 * A miner that calls for its data may go to, in SQL over `miners m`: active (registered, its
 * address allowed, no circuit opened within its cooldown: ACTIVE_SQL) and serving an axon.
 */
const ASKABLE = `${ACTIVE_SQL} AND m.axon_url IS NOT NULL`;
/** A miner whose index is loaded: it holds index rows (MinerIndexRepository keeps the count). */
const LOADED = 'm.index_buckets > 0';
/** A `failing` miner within its circuit's cooldown: what ACTIVE_SQL leaves out of `failing`. */
const FAILING = "(m.state = 'failing' AND m.failing_until > now())";

/** A miner holding a bucket, with the label and size its index claims for it. */
export interface BucketHolder {
  uid: number;
  hotkey: string;
  axonUrl: string;
  labelId: number | null;
  label: string | null;
  bytes: number;
}

/** One holder's claim on one (label, hour) bucket, with what choosing a holder weighs. */
export interface BucketHolding {
  timeBucket: number;
  /** null: data without a label. */
  label: string | null;
  uid: number;
  hotkey: string;
  coldkey: string;
  axonUrl: string;
  credibility: number;
  /** What the holder's index claims for the bucket. */
  bytes: number;
}

/**
 * Every read of the miners' index and its totals: the stats endpoints read the network totals,
 * query_bucket and stored-data answers find holders through the index's lookup indexes (or,
 * without a label, the per-miner hour totals); none of them scans the index. The writes are
 * MinerIndexRepository's.
 */
@Injectable()
export class MinerIndexReadRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /**
   * Changes whenever the totals change (see lockTotals), to a value it never had: a random uuid,
   * so that a database restored from a backup, whose next writes repeat the old counter, never
   * gives a value again for other totals than it named before.
   */
  async aggregatesVersion(): Promise<string> {
    const [row] = await this.dataSource.query<{ version_id: string }[]>(
      'SELECT version_id FROM aggregates_version WHERE id = 1',
    );
    return row?.version_id ?? '0';
  }

  topLabels(source: SourceId, limit: number): Promise<LabelSizeRow[]> {
    return this.dataSource.query(
      `SELECT label AS label_value, bytes AS content_size_bytes, adj_bytes AS adj_content_size_bytes
       FROM label_totals WHERE source = $1 AND bytes > 0
       ORDER BY adj_bytes DESC, label
       LIMIT $2`,
      [source, limit],
    );
  }

  /**
   * The source's hours from `oldest` on: the hours before it stay in the totals until the next
   * index sync removes them (up to an interval after they aged out), and are worth nothing.
   */
  ages(source: SourceId, oldest: number, limit: number): Promise<AgeSizeRow[]> {
    return this.dataSource.query(
      `SELECT time_bucket AS time_bucket_id, bytes AS content_size_bytes, adj_bytes AS adj_content_size_bytes
       FROM bucket_totals WHERE source = $1 AND time_bucket >= $2 AND bytes > 0
       ORDER BY time_bucket DESC LIMIT $3`,
      [source, oldest, limit],
    );
  }

  async bytesByLabel(label: string): Promise<{ bytes: number; adjBytes: number }> {
    const [row] = await this.dataSource.query<{ bytes: string | null; adj: number | null }[]>(
      `SELECT sum(t.bytes) AS bytes, sum(t.adj_bytes) AS adj
       FROM labels l JOIN label_totals t ON t.source IN (1, 2) AND t.label_id = l.id WHERE l.value = $1`,
      [label],
    );
    return { bytes: Number(row?.bytes ?? 0), adjBytes: row?.adj ?? 0 };
  }

  async labelId(label: string): Promise<number | undefined> {
    const [row] = await this.dataSource.query<{ id: number }[]>(
      'SELECT id FROM labels WHERE value = $1',
      [label],
    );
    return row?.id;
  }

  /**
   * The newest hour in [from, to] holding data of the source (and label, when given) at a miner
   * that may be asked for it (`holders`): an hour held only by miners that may not (failing,
   * refused address, no axon) was chosen, and query_bucket answered that no holder answered
   * without asking one, although older hours had holders to ask (an audit's finding). With
   * `askable: false`, at any miner whose index is stored: whether the index holds such data at
   * all, when no holder may be asked now.
   */
  async latestBucket(
    source: SourceId,
    labelId: number | undefined,
    from: number,
    to: number,
    { askable = true } = {},
  ): Promise<number | undefined> {
    // Held by any miner whose index is stored, when not only the askable ones are wanted.
    const holding = askable ? ASKABLE : 'true';
    const [row] =
      labelId === undefined
        ? await this.dataSource.query<{ bucket: number | null }[]>(
            `SELECT max(t.time_bucket) AS bucket
             FROM miner_bucket_totals t JOIN miners m ON m.uid = t.miner_uid
             WHERE t.source = $1 AND t.time_bucket BETWEEN $2 AND $3 AND t.bytes > 0 AND ${holding}`,
            [source, from, to],
          )
        : await this.dataSource.query<{ bucket: number | null }[]>(
            `SELECT max(i.time_bucket) AS bucket
             FROM miner_index i JOIN miners m ON m.uid = i.miner_uid
             WHERE i.source = $1 AND i.label_id = $2 AND i.time_bucket BETWEEN $3 AND $4 AND ${holding}`,
            [source, labelId, from, to],
          );
    return row?.bucket ?? undefined;
  }

  /**
   * Active miners holding the bucket, most credible first; with `askable: false`, any miner whose
   * index holds it (for its labels and count, never to be called).
   */
  async holders(
    source: SourceId,
    labelId: number | undefined,
    bucket: number,
    limit: number,
    { askable = true } = {},
  ): Promise<BucketHolder[]> {
    const holding = askable ? ASKABLE : 'true';
    if (labelId !== undefined) {
      const rows = await this.dataSource.query<
        { uid: number; hotkey: string; axon_url: string; bytes: string; label: string }[]
      >(
        `SELECT i.miner_uid AS uid, m.hotkey, m.axon_url, i.content_size_bytes AS bytes, l.value AS label
         FROM miner_index i JOIN miners m ON m.uid = i.miner_uid JOIN labels l ON l.id = i.label_id
         WHERE i.source = $1 AND i.label_id = $2 AND i.time_bucket = $3 AND ${holding}
         ORDER BY m.credibility DESC, m.uid LIMIT $4`,
        [source, labelId, bucket, limit],
      );
      return rows.map((row) => ({
        uid: row.uid,
        hotkey: row.hotkey,
        axonUrl: row.axon_url,
        labelId,
        label: row.label,
        bytes: Number(row.bytes),
      }));
    }
    // Without a label: the hour's largest bucket at each of its most credible holders, as kept
    // in their totals (the index's lookup is by label first, so it cannot find it by hour). The
    // holders are chosen before their labels are read: a few lookups, not a join over every label.
    const rows = await this.dataSource.query<
      {
        uid: number;
        hotkey: string;
        axon_url: string;
        label_id: number | null;
        label: string | null;
        bytes: string;
      }[]
    >(
      `SELECT h.uid, h.hotkey, h.axon_url, h.label_id, l.value AS label, h.bytes
       FROM (SELECT t.miner_uid AS uid, m.hotkey, m.axon_url, m.credibility,
                    t.largest_label_id AS label_id, t.largest_bytes AS bytes
             FROM miner_bucket_totals t JOIN miners m ON m.uid = t.miner_uid
             WHERE t.source = $1 AND t.time_bucket = $2 AND ${holding}
             ORDER BY m.credibility DESC, m.uid LIMIT $3) AS h
       LEFT JOIN labels l ON l.id = h.label_id
       ORDER BY h.credibility DESC, h.uid`,
      [source, bucket, limit],
    );
    return rows.map((row) => ({
      uid: row.uid,
      hotkey: row.hotkey,
      axonUrl: row.axon_url,
      labelId: row.label_id,
      label: row.label,
      bytes: Number(row.bytes),
    }));
  }

  /** Each of `uids`' claimed bytes over its stored index (its hour totals), for those holding one. */
  async claimedBytes(uids: readonly number[]): Promise<Map<number, number>> {
    const rows = await this.dataSource.query<{ uid: number; bytes: string }[]>(
      `SELECT miner_uid AS uid, sum(bytes)::text AS bytes FROM miner_bucket_totals
        WHERE miner_uid = ANY($1::int[]) GROUP BY miner_uid HAVING sum(bytes) > 0`,
      [uids],
    );
    return new Map(rows.map((row) => [row.uid, Number(row.bytes)]));
  }

  /**
   * One bucket of the miner's stored index, sampled by its claimed size (the exponential keys of
   * a weighted sample of one: the smallest -ln(u)/bytes), as a fresh index's is picked; undefined
   * when it claims no byte. Reads the miner's partition whole (a spot check's few a sync), and
   * only the picked row's label (joined to every row, 400k labels took 450 ms, not 70: a
   * hostile-miner audit).
   */
  async sampleBucket(uid: number): Promise<IndexRow | undefined> {
    const [row] = await this.dataSource.query<
      { source: SourceId; label: string | null; time_bucket: number; bytes: string }[]
    >(
      `SELECT s.source, l.value AS label, s.time_bucket, s.content_size_bytes::text AS bytes
         FROM (SELECT source, label_id, time_bucket, content_size_bytes FROM miner_index
                WHERE miner_uid = $1 AND content_size_bytes > 0
                ORDER BY -ln(1 - random()) / content_size_bytes LIMIT 1) AS s
         LEFT JOIN labels l ON l.id = s.label_id`,
      [uid],
    );
    return row
      ? {
          source: row.source,
          label: row.label,
          timeBucket: row.time_bucket,
          bytes: Number(row.bytes),
        }
      : undefined;
  }

  /** Whether an active miner with an axon (those `holdings` reads) holds index rows. */
  async anyIndexLoaded(): Promise<boolean> {
    const [row] = await this.dataSource.query<{ loaded: boolean }[]>(
      `SELECT EXISTS (SELECT 1 FROM miners m WHERE ${LOADED} AND ${ASKABLE}) AS loaded`,
    );
    return row.loaded;
  }

  /**
   * Over every miner holding index rows, askable or not (the totals count each of them), and the
   * askable ones apart, by anyIndexLoaded's rule. One pass over the miners table (a row per uid:
   * hundreds), as before `usable` was counted.
   */
  async indexFreshness(): Promise<IndexFreshness> {
    const [row] = await this.dataSource.query<
      {
        loaded: number;
        usable: number;
        failing: number;
        address_refused: number;
        deregistered: number;
        no_axon: number;
        failing_until: Date | null;
        newest: Date | null;
        oldest: Date | null;
        last_read: Date | null;
      }[]
    >(
      `SELECT count(*) FILTER (WHERE ${LOADED})::int AS loaded,
         count(*) FILTER (WHERE ${LOADED} AND ${ASKABLE})::int AS usable,
         count(*) FILTER (WHERE ${LOADED} AND ${FAILING})::int AS failing,
         count(*) FILTER (WHERE ${LOADED} AND m.state = 'address_refused')::int AS address_refused,
         count(*) FILTER (WHERE ${LOADED} AND m.state = 'deregistered')::int AS deregistered,
         count(*) FILTER (WHERE ${LOADED} AND ${ACTIVE_SQL} AND m.axon_url IS NULL)::int AS no_axon,
         min(m.failing_until) FILTER (WHERE ${LOADED} AND ${FAILING}) AS failing_until,
         max(m.index_synced_at) FILTER (WHERE ${LOADED}) AS newest,
         min(m.index_synced_at) FILTER (WHERE ${LOADED}) AS oldest,
         max(m.index_synced_at) AS last_read
       FROM miners m`,
    );
    return {
      loaded: row.loaded,
      usable: row.usable,
      unusable: {
        failing: row.failing,
        addressRefused: row.address_refused,
        deregistered: row.deregistered,
        noAxon: row.no_axon,
      },
      failingUntil: row.failing_until,
      newestSyncedAt: row.newest,
      oldestSyncedAt: row.oldest,
      lastReadAt: row.last_read,
    };
  }

  /**
   * Who holds the labels' buckets in the newest `maxHours` hours of [from, to] that hold any
   * (null in `labels`: unlabeled data), newest first, each bucket's active holders most
   * credible first. Each label is read as its own range of each partition's (source, label_id,
   * time_bucket) index, newest hours first: the newest hours are found by reading only as far
   * back as they reach (not every hour of the range: a hot label has holders in each of its
   * 720 hours), then their holders are read from the hour where those end.
   */
  async holdings(
    source: SourceId,
    labels: readonly (string | null)[],
    from: number,
    to: number,
    maxHours: number,
  ): Promise<BucketHolding[]> {
    const named = labels.filter((label): label is string => label !== null);
    const unlabeled = labels.includes(null);
    if (named.length === 0 && !unlabeled) return [];
    // One branch per kind of label, each an equality on the index's label_id (an OR of both
    // kinds, or an IN over a subquery, would read the whole hour range of every label).
    const perLabel = (select: string, from: (labelCondition: string) => string) =>
      [
        ...(named.length > 0
          ? [
              `SELECT ${select.replace('$LABEL', 'w.value')}
              FROM wanted w CROSS JOIN LATERAL (${from('i.label_id = w.id')}) AS h`,
            ]
          : []),
        ...(unlabeled
          ? [
              `SELECT ${select.replace('$LABEL', 'NULL::varchar')}
              FROM (${from('i.label_id IS NULL')}) AS h`,
            ]
          : []),
      ].join(' UNION ALL ');
    const rows = await this.dataSource.query<
      {
        time_bucket: number;
        label: string | null;
        uid: number;
        hotkey: string;
        coldkey: string;
        axon_url: string;
        credibility: number;
        bytes: string;
      }[]
    >(
      `WITH active AS MATERIALIZED (
         SELECT m.uid FROM miners m WHERE ${ASKABLE}),
       wanted AS MATERIALIZED (SELECT id, value FROM labels WHERE value = ANY($2::varchar[])),
       hours AS (${perLabel(
         'h.time_bucket',
         (condition) => `SELECT DISTINCT i.time_bucket FROM miner_index i
           WHERE i.source = $1 AND ${condition} AND i.time_bucket BETWEEN $3 AND $4
             AND i.miner_uid IN (SELECT uid FROM active)
           ORDER BY i.time_bucket DESC LIMIT $5`,
       )}),
       oldest AS (SELECT min(time_bucket) AS hour FROM (
         SELECT DISTINCT time_bucket FROM hours ORDER BY time_bucket DESC LIMIT $5) AS newest),
       held AS (${perLabel(
         '$LABEL AS label, h.*',
         (condition) => `SELECT i.time_bucket, i.miner_uid, i.content_size_bytes
           FROM miner_index i
           WHERE i.source = $1 AND ${condition}
             AND i.time_bucket BETWEEN (SELECT hour FROM oldest) AND $4`,
       )})
       SELECT h.time_bucket, h.label, h.miner_uid AS uid, m.hotkey, m.coldkey,
              m.axon_url, m.credibility, h.content_size_bytes AS bytes
       FROM held h JOIN miners m ON m.uid = h.miner_uid
       WHERE ${ASKABLE}
       ORDER BY h.time_bucket DESC, h.label NULLS LAST, m.credibility DESC, h.miner_uid`,
      [source, named, from, to, maxHours],
    );
    return rows.map((row) => ({
      timeBucket: row.time_bucket,
      label: row.label,
      uid: row.uid,
      hotkey: row.hotkey,
      coldkey: row.coldkey,
      axonUrl: row.axon_url,
      credibility: row.credibility,
      bytes: Number(row.bytes),
    }));
  }
}

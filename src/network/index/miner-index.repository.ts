import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { PoolClient } from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { DataSource, EntityManager } from 'typeorm';
import { returningRows } from '../../database/returning-rows';
import { SourceId } from '../sn13/sources';
import { binaryCopyChunks, COPY_COLUMNS } from './binary-copy';
import { IndexRow } from './compressed-index';
import {
  NO_LABEL,
  prepareIndex,
  Totals,
  totalsColumns,
  totalsDifference,
  totalsFromColumns,
  totalsKey,
} from './prepared-index';

/** Namespace of the per-miner advisory locks (the second key is the uid). */
const MINER_LOCK_NAMESPACE = 7_013_001;
/** Arbitrary constant shared by every writer of the network totals. */
const TOTALS_LOCK_ID = 7_013_000_002;

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

/** A miner's own totals: per (source, label id) and per (source, hour). */
interface MinerTotals {
  labels: Totals;
  buckets: Totals;
}

/** A miner's own totals as kept: with each hour's largest bucket (see PreparedIndex). */
interface KeptTotals extends MinerTotals {
  largest: Map<number, { labelId: number; bytes: number }>;
}

/** A row deleted from a miner's partition. */
interface RemovedRow {
  source: number;
  label_id: number | null;
  time_bucket: number;
  bytes: string;
}

/** What the UPDATE of one aggregates table reports: rows updated, and those now at 0 bytes. */
interface UpdatedTotals {
  kind: 'label' | 'bucket';
  count: number;
  emptied_sources: number[];
  emptied_ids: number[];
}

/**
 * Every read and write of the miners' index and the aggregates over it (labels, the per-miner
 * and network totals, their version). Replacing one miner's index is one transaction: its rows
 * are swapped (bulk-loaded with binary COPY) and its old per-label and per-hour totals are
 * subtracted from the network totals and the new ones added, weighted by its credibility.
 * Dropping an index (a uid deregistered, given a new hotkey, or missing syncs by its own
 * fault) or its hours older than the subnet values subtracts what goes the same way. The reads
 * serve the stats endpoints from the totals and query_bucket through the index's lookup indexes
 * (or, without a label, the per-miner hour totals); none of them scans the index.
 */
@Injectable()
export class MinerIndexRepository {
  /** Labels are never deleted and their ids never change, so they are cached for good. */
  private readonly labelIds = new Map<string, number>();
  private readonly partitions = new Set<number>();

  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /**
   * Replaces one miner's index in one transaction. The rows and the miner's own totals are
   * written under a per-miner lock, so replaces of different miners overlap; only the short
   * update of the network totals takes the global aggregates lock, after which the miner's
   * credibility is read, so a concurrent credibility change cannot be applied twice or missed.
   * Everything that needs no database (ordering the rows, summing the totals) is done before
   * the transaction starts.
   */
  async replaceMinerIndex(uid: number, rows: readonly IndexRow[]): Promise<void> {
    const labelIds = await this.resolveLabels(rows);
    const prepared = prepareIndex(rows, labelIds);
    const partition = await this.ensurePartition(uid);
    await this.dataSource.transaction(async (manager) => {
      await manager.query('SELECT pg_advisory_xact_lock($1, $2)', [MINER_LOCK_NAMESPACE, uid]);
      await this.copyRows(manager, partition, uid, rows, prepared.order, labelIds);
      await this.buildLookupIndex(manager, partition);
      const old = await this.swapTotals(manager, uid, prepared);
      await this.lockTotals(manager);
      const [miner] = await manager
        .query<{ credibility: number }[]>(
          `UPDATE miners SET index_synced_at = now(), index_buckets = $2, index_missed_syncs = 0
           WHERE uid = $1 RETURNING credibility`,
          [uid, rows.length],
        )
        .then((result) => returningRows<{ credibility: number }>(result));
      if (!miner) throw new Error(`unknown miner ${uid}`);
      await this.applyDeltas(
        manager,
        totalsDifference(prepared.labels, old.labels),
        totalsDifference(prepared.buckets, old.buckets),
        miner.credibility,
      );
    });
  }

  /**
   * Serializes the transactions that write the network totals (index replaces, credibility
   * changes): they touch overlapping rows in different orders and would otherwise deadlock.
   * Readers are never blocked. Released at commit or rollback. Whoever takes the lock is about
   * to change the totals, so the version the readers' caches are keyed by moves on.
   */
  async lockTotals(manager: EntityManager): Promise<void> {
    await manager.query('SELECT pg_advisory_xact_lock($1)', [TOTALS_LOCK_ID]);
    await manager.query('UPDATE aggregates_version SET version = version + 1 WHERE id = 1');
  }

  /**
   * Adds each miner's credibility change (`deltas[i]` for `uids[i]`) times its per-label and
   * per-hour totals to the adjusted network totals, in the caller's transaction, which holds
   * the totals lock.
   */
  async propagateCredibility(
    manager: EntityManager,
    uids: readonly number[],
    deltas: readonly number[],
  ): Promise<void> {
    await manager.query(
      `UPDATE label_totals AS t SET adj_bytes = t.adj_bytes + d.adj
       FROM (SELECT m.source, m.label_id, sum(m.bytes * c.delta) AS adj
             FROM miner_label_totals m JOIN unnest($1::int[], $2::float8[]) AS c(uid, delta) ON c.uid = m.miner_uid
             GROUP BY m.source, m.label_id) AS d
       WHERE t.source = d.source AND t.label_id = d.label_id`,
      [uids, deltas],
    );
    await manager.query(
      `UPDATE bucket_totals AS t SET adj_bytes = t.adj_bytes + d.adj
       FROM (SELECT m.source, m.time_bucket, sum(m.bytes * c.delta) AS adj
             FROM miner_bucket_totals m JOIN unnest($1::int[], $2::float8[]) AS c(uid, delta) ON c.uid = m.miner_uid
             GROUP BY m.source, m.time_bucket) AS d
       WHERE t.source = d.source AND t.time_bucket = d.time_bucket`,
      [uids, deltas],
    );
  }

  /**
   * Forgets the indexes of those of `uids` that hold one, in the caller's transaction: for a
   * transaction that deregisters uids or gives them new hotkeys. Call it before that
   * transaction takes the totals lock or touches a miner's row (the order an index replace
   * takes its locks in). Each index leaves the network totals at its miner's credibility as it
   * stands, the one its bytes are counted at, so the caller may change the credibility after.
   * Returns the uids whose index was dropped.
   */
  async dropIndexes(manager: EntityManager, uids: readonly number[]): Promise<number[]> {
    const [{ holding }] = await manager.query<{ holding: number[] }[]>(
      `SELECT coalesce(array_agg(DISTINCT miner_uid ORDER BY miner_uid), '{}') AS holding
       FROM miner_bucket_totals WHERE miner_uid = ANY($1::int[])`,
      [uids],
    );
    await this.lockMiners(manager, holding);
    await this.dropLocked(manager, holding);
    return holding;
  }

  /** Counts one more index sync missed by its miner's own fault for each of `uids`. */
  async countMissedSyncs(uids: readonly number[]): Promise<void> {
    if (uids.length === 0) return;
    await this.dataSource.query(
      'UPDATE miners SET index_missed_syncs = index_missed_syncs + 1 WHERE uid = ANY($1::int[])',
      [uids],
    );
  }

  /**
   * Drops, in one transaction, the indexes of the miners that have missed `missedSyncs` index
   * syncs in a row by their own fault. Returns the uids whose index was dropped.
   */
  async dropStaleIndexes(missedSyncs: number): Promise<number[]> {
    const stale = async (manager: EntityManager) =>
      (
        await manager.query<{ uid: number }[]>(
          `SELECT m.uid FROM miners m
           WHERE m.index_missed_syncs >= $1
             AND EXISTS (SELECT FROM miner_bucket_totals t WHERE t.miner_uid = m.uid)
           ORDER BY m.uid`,
          [missedSyncs],
        )
      ).map((row) => row.uid);
    const candidates = await stale(this.dataSource.manager);
    if (candidates.length === 0) return [];
    return this.dataSource.transaction(async (manager) => {
      await this.lockMiners(manager, candidates);
      // A replace that held one of the locks until now has just synced its miner.
      const still = (await stale(manager)).filter((uid) => candidates.includes(uid));
      await this.dropLocked(manager, still);
      return still;
    });
  }

  /**
   * Removes the hours before `hour` from every miner's index, and their bytes from the totals,
   * one miner per transaction. Returns how many rows went.
   */
  async dropHoursBefore(hour: number): Promise<number> {
    const holders = await this.dataSource.query<{ uid: number }[]>(
      'SELECT DISTINCT miner_uid AS uid FROM miner_bucket_totals WHERE time_bucket < $1 ORDER BY 1',
      [hour],
    );
    let removed = 0;
    for (const { uid } of holders) {
      removed += await this.dataSource.transaction(async (manager) => {
        await this.lockMiners(manager, [uid]);
        const rows = returningRows<RemovedRow>(
          await manager.query(
            `DELETE FROM ${partitionOf(uid)} WHERE time_bucket < $1
             RETURNING source, label_id, time_bucket, content_size_bytes AS bytes`,
            [hour],
          ),
        );
        if (rows.length === 0) return 0;
        const labeled = rows.filter((row) => row.label_id !== null);
        const gone: MinerTotals = {
          labels: totalsFromColumns(
            labeled.map((row) => row.source),
            labeled.map((row) => row.label_id!),
            labeled.map((row) => row.bytes),
          ),
          buckets: totalsFromColumns(
            rows.map((row) => row.source),
            rows.map((row) => row.time_bucket),
            rows.map((row) => row.bytes),
          ),
        };
        const old = await this.takeTotals(manager, uid);
        // Whole hours go: the largest bucket of each hour left stays what it was.
        await this.putTotals(manager, uid, {
          labels: totalsDifference(old.labels, gone.labels),
          buckets: totalsDifference(old.buckets, gone.buckets),
          largest: old.largest,
        });
        await this.subtractFromNetwork(manager, uid, gone, rows.length);
        return rows.length;
      });
    }
    return removed;
  }

  /** Changes whenever the totals change (see lockTotals). */
  async aggregatesVersion(): Promise<string> {
    const [row] = await this.dataSource.query<{ version: string }[]>(
      'SELECT version FROM aggregates_version WHERE id = 1',
    );
    return row?.version ?? '0';
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

  ages(source: SourceId, limit: number): Promise<AgeSizeRow[]> {
    return this.dataSource.query(
      `SELECT time_bucket AS time_bucket_id, bytes AS content_size_bytes, adj_bytes AS adj_content_size_bytes
       FROM bucket_totals WHERE source = $1 AND bytes > 0
       ORDER BY time_bucket DESC LIMIT $2`,
      [source, limit],
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

  /** The newest hour in [from, to] holding data of the source (and label, when given). */
  async latestBucket(
    source: SourceId,
    labelId: number | undefined,
    from: number,
    to: number,
  ): Promise<number | undefined> {
    const [row] =
      labelId === undefined
        ? await this.dataSource.query<{ bucket: number | null }[]>(
            'SELECT max(time_bucket) AS bucket FROM bucket_totals WHERE source = $1 AND time_bucket BETWEEN $2 AND $3 AND bytes > 0',
            [source, from, to],
          )
        : await this.dataSource.query<{ bucket: number | null }[]>(
            'SELECT max(time_bucket) AS bucket FROM miner_index WHERE source = $1 AND label_id = $2 AND time_bucket BETWEEN $3 AND $4',
            [source, labelId, from, to],
          );
    return row?.bucket ?? undefined;
  }

  /** Active miners holding the bucket, most credible first. */
  async holders(
    source: SourceId,
    labelId: number | undefined,
    bucket: number,
    limit: number,
  ): Promise<BucketHolder[]> {
    if (labelId !== undefined) {
      const rows = await this.dataSource.query<
        { uid: number; hotkey: string; axon_url: string; bytes: string; label: string }[]
      >(
        `SELECT i.miner_uid AS uid, m.hotkey, m.axon_url, i.content_size_bytes AS bytes, l.value AS label
         FROM miner_index i JOIN miners m ON m.uid = i.miner_uid JOIN labels l ON l.id = i.label_id
         WHERE i.source = $1 AND i.label_id = $2 AND i.time_bucket = $3 AND m.state = 'active'
           AND m.axon_url IS NOT NULL
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
             WHERE t.source = $1 AND t.time_bucket = $2 AND m.state = 'active' AND m.axon_url IS NOT NULL
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

  /** Whether an active miner with an axon (those `holdings` reads) holds index rows. */
  async anyIndexLoaded(): Promise<boolean> {
    const [row] = await this.dataSource.query<{ loaded: boolean }[]>(
      `SELECT EXISTS (SELECT 1 FROM miners
         WHERE index_buckets > 0 AND state = 'active' AND axon_url IS NOT NULL) AS loaded`,
    );
    return row.loaded;
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
         SELECT uid FROM miners WHERE state = 'active' AND axon_url IS NOT NULL),
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
       WHERE m.state = 'active' AND m.axon_url IS NOT NULL
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

  /** Label ids for every label in `rows`, creating the missing ones. */
  private async resolveLabels(rows: readonly IndexRow[]): Promise<Map<string, number>> {
    const missing = new Set<string>();
    for (const { label } of rows) {
      if (label !== null && !this.labelIds.has(label)) missing.add(label);
    }
    if (missing.size > 0) {
      const values = [...missing];
      await this.dataSource.query(
        'INSERT INTO labels (value) SELECT unnest($1::varchar[]) ON CONFLICT (value) DO NOTHING',
        [values],
      );
      const found = await this.dataSource.query<{ id: number; value: string }[]>(
        'SELECT id, value FROM labels WHERE value = ANY($1::varchar[])',
        [values],
      );
      for (const label of found) this.labelIds.set(label.value, label.id);
    }
    return this.labelIds;
  }

  /**
   * The miner's partition, created on first use in its own statement: creating a partition
   * locks the parent table, which must not last for a whole replace.
   */
  private async ensurePartition(uid: number): Promise<string> {
    const name = partitionOf(uid);
    if (!this.partitions.has(uid)) {
      await this.dataSource
        .query(`CREATE TABLE IF NOT EXISTS ${name} PARTITION OF miner_index FOR VALUES IN (${uid})`)
        .catch((error: { code?: string }) => {
          // Another replica created it between our check and our statement.
          if (error.code !== '42P07') throw error;
        });
      this.partitions.add(uid);
    }
    return name;
  }

  /**
   * Empties the miner's partition and bulk-loads the new rows straight into it (no routing
   * through the parent). FREEZE, allowed because the partition was truncated in this
   * transaction, writes the rows frozen and all-visible: no later pass of readers or VACUUM
   * has to set hint bits on them. Like the TRUNCATE itself, frozen rows are not MVCC-safe for
   * snapshots older than the commit; nothing reads miner_index in such a snapshot.
   */
  private async copyRows(
    manager: EntityManager,
    partition: string,
    uid: number,
    rows: readonly IndexRow[],
    order: Uint32Array,
    labelIds: ReadonlyMap<string, number>,
  ): Promise<void> {
    // Loading into an empty table and indexing afterwards is several times faster than
    // maintaining the index row by row during COPY.
    await manager.query(`DROP INDEX IF EXISTS ${partition}_lookup`);
    await manager.query(`TRUNCATE ${partition}`);
    const client = (await manager.queryRunner!.connect()) as PoolClient;
    const stream = client.query(
      copyFrom(`COPY ${partition} ${COPY_COLUMNS} FROM STDIN (FORMAT binary, FREEZE)`),
    );
    await pipeline(Readable.from(binaryCopyChunks(uid, rows, order, labelIds)), stream);
  }

  /** query_bucket's lookup; the rows arrive in its order, so the build's sort is a check. */
  private async buildLookupIndex(manager: EntityManager, partition: string): Promise<void> {
    await manager.query(
      `CREATE INDEX ${partition}_lookup ON ${partition} (source, label_id, time_bucket)`,
    );
  }

  /** Replaces the miner's own totals with `fresh`; returns the ones they replace. */
  private async swapTotals(
    manager: EntityManager,
    uid: number,
    fresh: KeptTotals,
  ): Promise<MinerTotals> {
    const old = await this.takeTotals(manager, uid);
    await this.putTotals(manager, uid, fresh);
    return old;
  }

  /** Deletes the miner's own totals and returns them. */
  private async takeTotals(manager: EntityManager, uid: number): Promise<KeptTotals> {
    const [oldLabels] = returningRows<{ sources: number[]; label_ids: number[]; bytes: string[] }>(
      await manager.query(
        'DELETE FROM miner_label_arrays WHERE miner_uid = $1 RETURNING sources, label_ids, bytes',
        [uid],
      ),
    );
    const oldBuckets = returningRows<{
      source: number;
      time_bucket: number;
      bytes: string;
      largest_label_id: number | null;
      largest_bytes: string;
    }>(
      await manager.query(
        `DELETE FROM miner_bucket_totals WHERE miner_uid = $1
         RETURNING source, time_bucket, bytes, largest_label_id, largest_bytes`,
        [uid],
      ),
    );
    return {
      labels: oldLabels
        ? totalsFromColumns(oldLabels.sources, oldLabels.label_ids, oldLabels.bytes)
        : new Map<number, number>(),
      buckets: totalsFromColumns(
        oldBuckets.map((row) => row.source),
        oldBuckets.map((row) => row.time_bucket),
        oldBuckets.map((row) => row.bytes),
      ),
      largest: new Map(
        oldBuckets.map((row) => [
          totalsKey(row.source, row.time_bucket),
          { labelId: row.largest_label_id ?? NO_LABEL, bytes: Number(row.largest_bytes) },
        ]),
      ),
    };
  }

  /** Writes the miner's own totals (after takeTotals). */
  private async putTotals(manager: EntityManager, uid: number, fresh: KeptTotals): Promise<void> {
    const labels = totalsColumns(fresh.labels);
    await manager.query(
      'INSERT INTO miner_label_arrays (miner_uid, sources, label_ids, bytes) VALUES ($1, $2::smallint[], $3::int[], $4::bigint[])',
      [uid, labels.sources, labels.ids, labels.bytes],
    );
    const buckets = totalsColumns(fresh.buckets);
    const largest = buckets.ids.map((hour, i) =>
      fresh.largest.get(totalsKey(buckets.sources[i], hour))!,
    );
    await manager.query(
      `INSERT INTO miner_bucket_totals (miner_uid, source, time_bucket, bytes, largest_label_id, largest_bytes)
       SELECT $1, * FROM unnest($2::smallint[], $3::int[], $4::bigint[], $5::int[], $6::bigint[])`,
      [
        uid,
        buckets.sources,
        buckets.ids,
        buckets.bytes,
        largest.map((bucket) => (bucket.labelId === NO_LABEL ? null : bucket.labelId)),
        largest.map((bucket) => bucket.bytes),
      ],
    );
  }

  /** Per-miner locks, in uid order: two holders of several cannot wait for each other. */
  private async lockMiners(manager: EntityManager, uids: readonly number[]): Promise<void> {
    for (const uid of [...uids].sort((a, b) => a - b))
      await manager.query('SELECT pg_advisory_xact_lock($1, $2)', [MINER_LOCK_NAMESPACE, uid]);
  }

  /** Empties the partitions of miners whose locks the caller holds, and subtracts their totals. */
  private async dropLocked(manager: EntityManager, uids: readonly number[]): Promise<void> {
    // Every TRUNCATE before the totals lock is taken: each may wait for readers of its partition.
    for (const uid of uids) await manager.query(`TRUNCATE ${partitionOf(uid)}`);
    for (const uid of uids)
      await this.subtractFromNetwork(manager, uid, await this.takeTotals(manager, uid), 'all');
  }

  /**
   * Takes `gone` (bytes that left a miner's index: `rows` rows, or all of them) out of the
   * network totals, at the miner's credibility read under the totals lock, as a replace does.
   */
  private async subtractFromNetwork(
    manager: EntityManager,
    uid: number,
    gone: MinerTotals,
    rows: number | 'all',
  ): Promise<void> {
    await this.lockTotals(manager);
    const [miner] = returningRows<{ credibility: number }>(
      await manager.query(
        `UPDATE miners SET index_buckets = CASE WHEN $2::int IS NULL THEN 0 ELSE greatest(0, index_buckets - $2::int) END
         WHERE uid = $1 RETURNING credibility`,
        [uid, rows === 'all' ? null : rows],
      ),
    );
    if (!miner) throw new Error(`unknown miner ${uid}`);
    const none: Totals = new Map();
    await this.applyDeltas(
      manager,
      totalsDifference(none, gone.labels),
      totalsDifference(none, gone.buckets),
      miner.credibility,
    );
  }

  /**
   * Adds the deltas (bytes) to the network totals, weighted by `credibility` for the adjusted
   * ones. Existing totals of both tables are updated in one statement, through a join (cheaper
   * than INSERT … ON CONFLICT row by row); only when some keys were not there (new labels or
   * hours, rare once the network is known) are those inserted. The caller holds the aggregates
   * lock, so no other writer inserts the same keys in between. Totals that fall to 0 are
   * deleted (rarer still: the last holder of a label or an hour dropped it).
   */
  private async applyDeltas(
    manager: EntityManager,
    labelDeltas: Totals,
    bucketDeltas: Totals,
    credibility: number,
  ): Promise<void> {
    const labels = totalsColumns(labelDeltas);
    const buckets = totalsColumns(bucketDeltas);
    const updated = await manager.query<UpdatedTotals[]>(
      `WITH lu AS (
         UPDATE label_totals t SET bytes = t.bytes + d.bytes, adj_bytes = t.adj_bytes + d.bytes * $7::float8
         FROM unnest($1::smallint[], $2::int[], $3::bigint[]) AS d(source, label_id, bytes)
         WHERE t.source = d.source AND t.label_id = d.label_id
         RETURNING t.source, t.label_id AS id, t.bytes),
       bu AS (
         UPDATE bucket_totals t SET bytes = t.bytes + d.bytes, adj_bytes = t.adj_bytes + d.bytes * $7::float8
         FROM unnest($4::smallint[], $5::int[], $6::bigint[]) AS d(source, time_bucket, bytes)
         WHERE t.source = d.source AND t.time_bucket = d.time_bucket
         RETURNING t.source, t.time_bucket AS id, t.bytes)
       SELECT kind, count(*)::int AS count,
              coalesce(array_agg(source) FILTER (WHERE bytes <= 0), '{}') AS emptied_sources,
              coalesce(array_agg(id) FILTER (WHERE bytes <= 0), '{}') AS emptied_ids
       FROM (SELECT 'label' AS kind, * FROM lu UNION ALL SELECT 'bucket', * FROM bu) AS u
       GROUP BY kind`,
      [
        labels.sources,
        labels.ids,
        labels.bytes,
        buckets.sources,
        buckets.ids,
        buckets.bytes,
        credibility,
      ],
    );
    const of = (kind: UpdatedTotals['kind']) => updated.find((row) => row.kind === kind);
    if ((of('label')?.count ?? 0) < labels.ids.length) {
      await manager.query(
        `INSERT INTO label_totals (source, label_id, label, bytes, adj_bytes)
         SELECT d.source, d.label_id, l.value, d.bytes, d.bytes * $4::float8
         FROM unnest($1::smallint[], $2::int[], $3::bigint[]) AS d(source, label_id, bytes)
         JOIN labels l ON l.id = d.label_id
         WHERE d.bytes > 0 AND NOT EXISTS (SELECT FROM label_totals t WHERE t.source = d.source AND t.label_id = d.label_id)`,
        [labels.sources, labels.ids, labels.bytes, credibility],
      );
    }
    if ((of('bucket')?.count ?? 0) < buckets.ids.length) {
      await manager.query(
        `INSERT INTO bucket_totals (source, time_bucket, bytes, adj_bytes)
         SELECT d.source, d.time_bucket, d.bytes, d.bytes * $4::float8
         FROM unnest($1::smallint[], $2::int[], $3::bigint[]) AS d(source, time_bucket, bytes)
         WHERE d.bytes > 0 AND NOT EXISTS (SELECT FROM bucket_totals t WHERE t.source = d.source AND t.time_bucket = d.time_bucket)`,
        [buckets.sources, buckets.ids, buckets.bytes, credibility],
      );
    }
    const label = of('label');
    if (label && label.emptied_ids.length > 0) {
      await manager.query(
        'DELETE FROM label_totals WHERE bytes <= 0 AND (source, label_id) IN (SELECT * FROM unnest($1::smallint[], $2::int[]))',
        [label.emptied_sources, label.emptied_ids],
      );
    }
    const bucket = of('bucket');
    if (bucket && bucket.emptied_ids.length > 0) {
      await manager.query(
        'DELETE FROM bucket_totals WHERE bytes <= 0 AND (source, time_bucket) IN (SELECT * FROM unnest($1::smallint[], $2::int[]))',
        [bucket.emptied_sources, bucket.emptied_ids],
      );
    }
  }
}

/** The table holding one miner's rows (created on first use by ensurePartition). */
function partitionOf(uid: number): string {
  if (!Number.isSafeInteger(uid) || uid < 0) throw new Error(`invalid miner uid ${uid}`);
  return `miner_index_p${uid}`;
}

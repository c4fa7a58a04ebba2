import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { returningRows } from '../../database/returning-rows';
import {
  NO_LABEL,
  Totals,
  totalsColumns,
  totalsDifference,
  totalsFromColumns,
  totalsKey,
} from './prepared-index';

/** Arbitrary constant shared by every writer of the network totals. */
export const TOTALS_LOCK_ID = 7_013_000_002;

/** A miner's own totals: per (source, label id) and per (source, hour). */
export interface MinerTotals {
  labels: Totals;
  buckets: Totals;
}

/** A miner's own totals as kept: with each hour's largest bucket (see PreparedIndex). */
export interface KeptTotals extends MinerTotals {
  largest: Map<number, { labelId: number; bytes: number }>;
}

/** What the UPDATE of one aggregates table reports: rows updated, and those now at 0 bytes. */
interface UpdatedTotals {
  kind: 'label' | 'bucket';
  count: number;
  emptied_sources: number[];
  emptied_ids: number[];
}

/**
 * The writes of the totals over the miners' index, each in the caller's transaction: each
 * miner's own (per label, per hour, with each hour's largest bucket) and the network's (raw
 * bytes, and bytes weighted by each holder's credibility). MinerIndexRepository calls it as it
 * writes the index; the reads are MinerIndexReadRepository's.
 */
@Injectable()
export class IndexTotalsRepository {
  /**
   * Serializes the transactions that write the network totals (index replaces, credibility
   * changes): they touch overlapping rows in different orders and would otherwise deadlock.
   * Readers are never blocked. Released at commit or rollback. Whoever takes the lock is about
   * to change the totals, so the version the readers' caches and tags are keyed by moves on: the
   * row's trigger draws a new `version_id` at every UPDATE (migration AggregatesVersionId); the
   * counter is what releases before it read.
   */
  async lockTotals(manager: EntityManager): Promise<void> {
    await this.holdTotalsLock(manager);
    await manager.query('UPDATE aggregates_version SET version = version + 1 WHERE id = 1');
  }

  /**
   * The totals lock alone, the version left where it is: for a transaction that must not run
   * beside the writers of the totals but changes none of them (the labels' prune).
   */
  async holdTotalsLock(manager: EntityManager): Promise<void> {
    await manager.query('SELECT pg_advisory_xact_lock($1)', [TOTALS_LOCK_ID]);
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

  /** Replaces the miner's own totals with `fresh`; returns the ones they replace. */
  async swapTotals(manager: EntityManager, uid: number, fresh: KeptTotals): Promise<MinerTotals> {
    const old = await this.takeTotals(manager, uid);
    await this.putTotals(manager, uid, fresh);
    return old;
  }

  /** Deletes the miner's own totals and returns them. */
  async takeTotals(manager: EntityManager, uid: number): Promise<KeptTotals> {
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
  async putTotals(manager: EntityManager, uid: number, fresh: KeptTotals): Promise<void> {
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

  /**
   * Takes `gone` (bytes that left a miner's index: `rows` rows, or all of them) out of the
   * network totals, at the miner's credibility read under the totals lock, as a replace does.
   */
  async subtractFromNetwork(
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
  async applyDeltas(
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

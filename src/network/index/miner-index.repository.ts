import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { PoolClient } from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { DataSource, EntityManager } from 'typeorm';
import { isValidatorSql } from '../../common/validator-standing';
import { returningRows } from '../../database/returning-rows';
import { binaryCopyChunks, COPY_COLUMNS } from './binary-copy';
import { IndexRow } from './compressed-index';
import { IndexTotalsRepository, MinerTotals } from './index-totals.repository';
import { LabelIdCache, LabelRow } from './label-id-cache';
import { prepareIndex, totalsDifference, totalsFromColumns } from './prepared-index';

/** Namespace of the per-miner advisory locks (the second key is the uid). */
const MINER_LOCK_NAMESPACE = 7_013_001;
/** Label ids kept between syncs (13–25 MB when full): see LabelIdCache. */
const LABEL_CACHE_SIZE = 100_000;
/** The largest `miners.index_missed_syncs` holds (a smallint). */
const SMALLINT_MAX = 32_767;

/** Who an index was fetched from: the miner's hotkey, and what makes a neuron a validator. */
export interface FetchedFrom {
  hotkey: string;
  /** VALIDATOR_MIN_STAKE: a permit holder with this much stake is a validator, not a miner. */
  validatorMinStake: number;
}

/**
 * The uid is no longer the miner whose index was fetched (re-registered by someone else,
 * deregistered, or now a validator, while the sync ran): the index is not stored.
 */
export class MinerReplacedError extends Error {
  constructor(uid: number, hotkey: string) {
    super(
      `uid ${uid} is no longer the miner ${hotkey} (re-registered, deregistered or now a validator during the sync)`,
    );
  }
}

/** Tries of a replace whose label ids were deleted meanwhile (LabelsGoneError), in all. */
const LABEL_TRIES = 3;
/**
 * Tries of the insert of new labels, each taking the next ids of the cycling sequence past the
 * ids in use it met (skipUsedIds).
 */
const INSERT_TRIES = 20;
/** The labels' prune reads every miner's label ids: longer than a request's statement may. */
const PRUNE_STATEMENT_TIMEOUT = '300s';

/**
 * Some label ids a replace resolved were deleted by the labels' prune before the replace took
 * the totals lock (on another replica, or ids cached here): the replace starts over.
 */
class LabelsGoneError extends Error {
  constructor(gone: number) {
    super(
      `${gone} of the index's label ids were deleted, or given to other labels, while it was written`,
    );
  }
}

/** A row deleted from a miner's partition. */
interface RemovedRow {
  source: number;
  label_id: number | null;
  time_bucket: number;
  bytes: string;
}

/**
 * Every write of the miners' index and the aggregates over it (labels, the per-miner and
 * network totals, their version). Replacing one miner's index is one transaction: its rows
 * are swapped (bulk-loaded with binary COPY) and its old per-label and per-hour totals are
 * subtracted from the network totals and the new ones added, weighted by its credibility
 * (IndexTotalsRepository). Dropping an index (a uid deregistered, given a new hotkey, or missing
 * syncs by its own fault) or its hours older than the subnet values subtracts what goes the
 * same way. The reads are MinerIndexReadRepository's.
 */
@Injectable()
export class MinerIndexRepository {
  private readonly labelIds = new LabelIdCache(LABEL_CACHE_SIZE);
  private readonly partitions = new Set<number>();

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly totals: IndexTotalsRepository,
  ) {}

  /**
   * Replaces one miner's index in one transaction. The rows and the miner's own totals are
   * written under a per-miner lock, so replaces of different miners overlap; only the short
   * update of the network totals takes the global aggregates lock, after which the miner's
   * credibility is read, so a concurrent credibility change cannot be applied twice or missed.
   * Everything that needs no database (ordering the rows, summing the totals) is done before
   * the transaction starts. With `from` (who the index was fetched from), nothing is stored
   * unless the uid is still that hotkey's, registered and no validator (MinerReplacedError): a
   * sync runs for minutes, and a metagraph applied meanwhile may have changed any of those.
   */
  async replaceMinerIndex(
    uid: number,
    rows: readonly IndexRow[],
    from?: FetchedFrom,
  ): Promise<void> {
    for (let tried = 1; ; tried++) {
      try {
        return await this.replaceOnce(uid, rows, from);
      } catch (error) {
        if (!(error instanceof LabelsGoneError) || tried === LABEL_TRIES) throw error;
        this.labelIds.clear();
      }
    }
  }

  private async replaceOnce(
    uid: number,
    rows: readonly IndexRow[],
    from?: FetchedFrom,
  ): Promise<void> {
    const labelIds = await this.resolveLabels(rows);
    const prepared = prepareIndex(rows, labelIds);
    const partition = await this.ensurePartition(uid);
    await this.dataSource.transaction(async (manager) => {
      await manager.query('SELECT pg_advisory_xact_lock($1, $2)', [MINER_LOCK_NAMESPACE, uid]);
      await this.copyRows(manager, partition, uid, rows, prepared.order, labelIds);
      await this.buildLookupIndex(manager, partition);
      const old = await this.totals.swapTotals(manager, uid, prepared);
      await this.totals.lockTotals(manager);
      // Under the totals lock, which the labels' prune takes to delete: what is here stays.
      await this.expectLabels(manager, labelIds);
      const [miner] = await manager
        .query<{ credibility: number }[]>(
          `UPDATE miners SET index_synced_at = now(), index_buckets = $2, index_missed_syncs = 0
           WHERE uid = $1 AND ($3::text IS NULL OR (hotkey = $3 AND state <> 'deregistered'
             AND NOT ${isValidatorSql('$4')}))
           RETURNING credibility`,
          [uid, rows.length, from?.hotkey ?? null, from?.validatorMinStake ?? null],
        )
        .then((result) => returningRows<{ credibility: number }>(result));
      if (!miner && from) throw new MinerReplacedError(uid, from.hotkey);
      if (!miner) throw new Error(`unknown miner ${uid}`);
      await this.totals.applyDeltas(
        manager,
        totalsDifference(prepared.labels, old.labels),
        totalsDifference(prepared.buckets, old.buckets),
        miner.credibility,
      );
    });
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
    // Every candidate is locked before it is asked whether it holds an index: a replace of a
    // uid's first index committing in between was not dropped, and the old owner's index stayed
    // under the new hotkey (an audit's finding).
    await this.lockMiners(manager, [...new Set(uids)]);
    const [{ holding }] = await manager.query<{ holding: number[] }[]>(
      `SELECT coalesce(array_agg(DISTINCT miner_uid ORDER BY miner_uid), '{}') AS holding
       FROM miner_bucket_totals WHERE miner_uid = ANY($1::int[])`,
      [uids],
    );
    await this.dropLocked(manager, holding);
    return holding;
  }

  /**
   * Counts one more index sync missed by its miner's own fault for each of `uids`. The count
   * stops at smallint's top: a miner that never answers (or never serves an axon) is counted
   * every sync for as long as it stays registered.
   */
  async countMissedSyncs(uids: readonly number[]): Promise<void> {
    if (uids.length === 0) return;
    await this.dataSource.query(
      `UPDATE miners SET index_missed_syncs = LEAST(index_missed_syncs + 1, ${SMALLINT_MAX})
       WHERE uid = ANY($1::int[])`,
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
        const old = await this.totals.takeTotals(manager, uid);
        // Whole hours go: the largest bucket of each hour left stays what it was.
        await this.totals.putTotals(manager, uid, {
          labels: totalsDifference(old.labels, gone.labels),
          buckets: totalsDifference(old.buckets, gone.buckets),
          largest: old.largest,
        });
        await this.totals.subtractFromNetwork(manager, uid, gone, rows.length);
        return rows.length;
      });
    }
    return removed;
  }

  /**
   * Deletes the labels no miner's index names any longer, returning how many went: a label's row
   * outlived every index that named it, and a miner filing fresh labels at each sync (350,000 a
   * sync at most, a sync an hour) would otherwise grow the table by millions of rows a day (the
   * ids, from a cycling sequence, are reused: migration LabelIdsCycle). Used: named in a miner's
   * own totals (every labeled row), as an hour's largest bucket, or in the network totals. Found
   * without a lock, then deleted under the totals lock, each one rechecked against the network
   * totals: a replace that committed in between names them there (every row claims bytes: the
   * parser drops 0-byte buckets). A replace still writing finds its ids gone under the same
   * lock and starts over (replaceMinerIndex).
   */
  async dropUnusedLabels(): Promise<number> {
    const ids = await this.dataSource.transaction(async (manager) => {
      await manager.query(`SET LOCAL statement_timeout = '${PRUNE_STATEMENT_TIMEOUT}'`);
      const [{ unused }] = await manager.query<{ unused: number[] }[]>(
        `WITH used AS (
           SELECT unnest(label_ids) AS id FROM miner_label_arrays
           UNION SELECT largest_label_id FROM miner_bucket_totals WHERE largest_label_id IS NOT NULL
           UNION SELECT label_id FROM label_totals)
         SELECT coalesce(array_agg(l.id), '{}') AS unused
         FROM labels l WHERE NOT EXISTS (SELECT FROM used u WHERE u.id = l.id)`,
      );
      return unused;
    });
    if (ids.length === 0) return 0;
    const deleted = await this.dataSource.transaction(async (manager) => {
      await manager.query(`SET LOCAL statement_timeout = '${PRUNE_STATEMENT_TIMEOUT}'`);
      await this.totals.holdTotalsLock(manager);
      return returningRows<{ value: string }>(
        await manager.query(
          `DELETE FROM labels l WHERE l.id = ANY($1::int[])
             AND NOT EXISTS (SELECT FROM label_totals t WHERE t.label_id = l.id)
           RETURNING l.value`,
          [ids],
        ),
      );
    });
    // This replica's own cache would otherwise send its next replace naming one of them back
    // to the start (an audit measured 1.2 s for 0.4, and the whole cache cleared).
    this.labelIds.forget(deleted.map((row) => row.value));
    return deleted.length;
  }

  /** Throws LabelsGoneError when some of `labelIds` were deleted (or their ids reused). */
  private async expectLabels(
    manager: EntityManager,
    labelIds: ReadonlyMap<string, number>,
  ): Promise<void> {
    if (labelIds.size === 0) return;
    // By id and value: a cycled sequence may have given a deleted label's id to another.
    const [{ kept }] = await manager.query<{ kept: number }[]>(
      `SELECT count(*)::int AS kept
       FROM labels l JOIN unnest($1::varchar[], $2::int[]) AS u(value, id)
         ON l.id = u.id AND l.value = u.value`,
      [[...labelIds.keys()], [...labelIds.values()]],
    );
    if (kept < labelIds.size) throw new LabelsGoneError(labelIds.size - kept);
  }

  /**
   * Label ids for every label in `rows`, creating the missing ones. Rows that exist are read,
   * not inserted again: `INSERT … ON CONFLICT DO NOTHING` takes a value of the id sequence (an
   * int4) for every row it is given, and labels the bounded cache let go come back at every
   * sync (found by a review: 1999 ids for 200 labels). New ones are inserted in order, so two
   * replaces inserting the same labels never wait on each other in a circle.
   */
  private resolveLabels(rows: readonly IndexRow[]): Promise<Map<string, number>> {
    const labels = new Set<string>();
    for (const { label } of rows) if (label !== null) labels.add(label);
    return this.labelIds.resolve(labels, async (missing) => {
      const found = await this.findLabels(missing);
      const known = new Set(found.map((row) => row.value));
      let absent = missing.filter((label) => !known.has(label)).sort();
      // Past its end the id sequence cycles (migration LabelIdsCycle): a row given an id a label
      // still holds is skipped (any conflict), and inserted again with the next id.
      for (let tried = 0; absent.length > 0; tried++) {
        if (tried === INSERT_TRIES)
          throw new Error(`${absent.length} labels found no free id in ${INSERT_TRIES} tries`);
        await this.dataSource.query(
          'INSERT INTO labels (value) SELECT unnest($1::varchar[]) ON CONFLICT DO NOTHING',
          [absent],
        );
        const inserted = await this.findLabels(absent);
        // Not push(...inserted): past ~125,000 arguments that overflows the stack.
        for (const row of inserted) found.push(row);
        const stored = new Set(inserted.map((row) => row.value));
        absent = absent.filter((label) => !stored.has(label));
        if (absent.length > 0) await this.skipUsedIds();
      }
      return found;
    });
  }

  /**
   * Moves the id sequence past the run of ids in use that it has reached (after it cycled,
   * the oldest labels still named hold the first ids): the next insert takes free ones.
   */
  private async skipUsedIds(): Promise<void> {
    await this.dataSource.query(
      `SELECT setval('labels_id_seq', coalesce(
         (SELECT l.id FROM labels l
          WHERE l.id >= (SELECT last_value FROM labels_id_seq)
            AND NOT EXISTS (SELECT FROM labels m WHERE m.id = l.id::bigint + 1)
          ORDER BY l.id LIMIT 1),
         (SELECT last_value FROM labels_id_seq)))`,
    );
  }

  private findLabels(values: readonly string[]): Promise<LabelRow[]> {
    return this.dataSource.query<LabelRow[]>(
      'SELECT id, value FROM labels WHERE value = ANY($1::varchar[])',
      [values],
    );
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
      await this.totals.subtractFromNetwork(
        manager,
        uid,
        await this.totals.takeTotals(manager, uid),
        'all',
      );
  }
}

/** The table holding one miner's rows (created on first use by ensurePartition). */
function partitionOf(uid: number): string {
  if (!Number.isSafeInteger(uid) || uid < 0) throw new Error(`invalid miner uid ${uid}`);
  return `miner_index_p${uid}`;
}

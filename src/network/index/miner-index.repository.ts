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
import { IndexLabelsRepository, LabelsGoneError } from './index-labels.repository';
import { prepareIndex, totalsDifference, totalsFromColumns } from './prepared-index';

/** Namespace of the per-miner advisory locks (the second key is the uid). */
const MINER_LOCK_NAMESPACE = 7_013_001;
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
  private readonly partitions = new Set<number>();

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly totals: IndexTotalsRepository,
    private readonly labels: IndexLabelsRepository,
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
        this.labels.forgetCached();
      }
    }
  }

  private async replaceOnce(
    uid: number,
    rows: readonly IndexRow[],
    from?: FetchedFrom,
  ): Promise<void> {
    const labelIds = await this.labels.resolve(rows);
    const prepared = prepareIndex(rows, labelIds);
    const partition = await this.ensurePartition(uid);
    await this.dataSource.transaction(async (manager) => {
      await manager.query('SELECT pg_advisory_xact_lock($1, $2)', [MINER_LOCK_NAMESPACE, uid]);
      await this.copyRows(manager, partition, uid, rows, prepared.order, labelIds);
      await this.buildLookupIndex(manager, partition);
      const old = await this.totals.swapTotals(manager, uid, prepared);
      await this.totals.lockTotals(manager);
      // Under the totals lock, which the labels' prune takes to delete: what is here stays.
      await this.labels.expectKept(manager, labelIds);
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

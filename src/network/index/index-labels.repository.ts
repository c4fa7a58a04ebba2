import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { returningRows } from '../../database/returning-rows';
import { IndexRow } from './compressed-index';
import { IndexTotalsRepository } from './index-totals.repository';
import { LabelIdCache, LabelRow } from './label-id-cache';

/** Label ids kept between syncs (13–25 MB when full): see LabelIdCache. */
const LABEL_CACHE_SIZE = 100_000;
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
export class LabelsGoneError extends Error {
  constructor(gone: number) {
    super(
      `${gone} of the index's label ids were deleted, or given to other labels, while it was written`,
    );
  }
}

/**
 * The index's labels (`labels`: a label's text and its id, which index rows and totals name):
 * resolving an index's labels to ids (creating the new ones), checking that ids resolved
 * earlier still stand, and deleting the labels no index names any longer.
 */
@Injectable()
export class IndexLabelsRepository {
  private readonly labelIds = new LabelIdCache(LABEL_CACHE_SIZE);

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly totals: IndexTotalsRepository,
  ) {}

  /** Forgets the ids cached: some were deleted by the labels' prune (LabelsGoneError). */
  forgetCached(): void {
    this.labelIds.clear();
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
   * lock and starts over (MinerIndexRepository.replaceMinerIndex).
   */
  async dropUnused(): Promise<number> {
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
  async expectKept(manager: EntityManager, labelIds: ReadonlyMap<string, number>): Promise<void> {
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
  resolve(rows: readonly IndexRow[]): Promise<Map<string, number>> {
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
}

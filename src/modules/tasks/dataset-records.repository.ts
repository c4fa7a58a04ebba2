import { DataSource } from 'typeorm';
import { Source } from '../../common/source';
import { affectedCount } from '../../database/returning-rows';
import { JsonLinesFile } from './dataset-writer';
import { CompletedTask } from './task.types';
import { lockTaskRow, TaskLock } from './task-row-lock';
import { rewrittenAtSql } from './written-at';

/** A completed task that records a dataset an erasure can read: its file and its hash. */
const RECORDS_A_DATASET =
  "state = 'completed' AND dataset_file IS NOT NULL AND dataset_sha256 IS NOT NULL";

/**
 * What completed tasks record of their datasets, read and rewritten after their compile: an
 * author's erasure (DatasetErasure) finds the datasets of a platform and records the one it
 * rewrote. The compile's own records are TaskLifecycleRepository's. No Nest module provides
 * it: the erasure command (erase-author-command.ts) builds it on its own DataSource.
 */
export class DatasetRecordsRepository {
  constructor(private readonly dataSource: DataSource) {}

  /** The task `id` as it is now, when it is completed and records a dataset. */
  async completedDataset(id: string): Promise<CompletedTask | undefined> {
    const [task] = await this.dataSource.query<CompletedTask[]>(
      `SELECT * FROM scraping_tasks WHERE id = $1 AND ${RECORDS_A_DATASET}`,
      [id],
    );
    return task;
  }

  /**
   * Locks the task's row for one transaction, as TaskLifecycleRepository.lockTask does, but
   * waits for it at most `lockTimeoutMs` (`SET LOCAL lock_timeout`): an erasure never queues
   * long behind a compile or a conversion holding it. Past that, the query fails with SQLSTATE
   * 55P03 (lock_not_available) and nothing was done. The service's own users of the lock wait
   * as they did.
   */
  lockTask<T>(
    taskId: string,
    lockTimeoutMs: number,
    work: (lock: TaskLock) => Promise<T>,
  ): Promise<T> {
    return lockTaskRow(this.dataSource, taskId, work, lockTimeoutMs);
  }

  /** The completed tasks of `platform` that record a dataset, oldest completed first. */
  completedDatasets(platform: Source): Promise<CompletedTask[]> {
    return this.dataSource.query(
      `SELECT * FROM scraping_tasks WHERE platform = $1 AND ${RECORDS_A_DATASET}
       ORDER BY completed_at NULLS FIRST, id`,
      [platform],
    );
  }

  /** The ids of the tasks of `platform` compiling now, in order. */
  async compilingTasks(platform: Source): Promise<string[]> {
    const rows = await this.dataSource.query<{ id: string }[]>(
      `SELECT id FROM scraping_tasks WHERE platform = $1 AND state = 'compiling' ORDER BY id`,
      [platform],
    );
    return rows.map((row) => row.id);
  }

  /**
   * Records the JSON lines file that replaces the one of SHA-256 `replaced`, in the transaction
   * of the task row's `lock` (the file's rename is in it too): its size, hash, rows and first
   * and last times, and no Parquet file (the one made from the old rows is removed; the next
   * Parquet download makes another). Its completion time is kept: `completed_after` polls and
   * the prune pass read it. The file's own time, `dataset_written_at` (its `Last-Modified`), is
   * `now`, but at least the second after the one it replaces (rewrittenAtSql, as
   * recordParquet dates a Parquet file; `completed_at` for a file recorded before migration
   * 1765010000000): a client revalidating by If-Modified-Since alone gets the new file, even
   * from a command whose clock is behind the replica that compiled it. The old Parquet file's
   * `parquet_written_at` is kept: the next one's Last-Modified is then at least a second after
   * it (recordParquet), where a replica whose clock is behind gave the new file an earlier one,
   * and a client's If-Modified-Since kept the old rows (a review). False when the task no
   * longer records that file, so nothing was recorded.
   */
  async recordRewritten(
    taskId: string,
    replaced: string,
    dataset: JsonLinesFile,
    now: Date,
    lock: TaskLock,
  ): Promise<boolean> {
    const result: unknown = await lock.manager.query(
      `UPDATE scraping_tasks SET dataset_rows = $3, dataset_bytes = $4, dataset_sha256 = $5,
         data_start = $6, data_end = $7, parquet_file = NULL, parquet_bytes = NULL,
         parquet_sha256 = NULL, parquet_version = NULL,
         dataset_written_at = ${rewrittenAtSql('$8', 'COALESCE(dataset_written_at, completed_at)')}
       WHERE id = $1 AND state = 'completed' AND dataset_sha256 = $2`,
      [
        taskId,
        replaced,
        dataset.rows,
        dataset.bytes,
        dataset.sha256,
        dataset.start?.toISOString() ?? null,
        dataset.end?.toISOString() ?? null,
        now.toISOString(),
      ],
    );
    return affectedCount(result) > 0;
  }
}

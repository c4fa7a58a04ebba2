import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { retryDelaySql } from '../../common/retry-delay';
import { affectedCount, returningRows } from '../../database/returning-rows';
import { notErasedSql, sourceIdOfItem } from '../../network/erased-authors';
import { canonicalItem } from '../../network/item-uri';
import { authorOfItem, DataItem } from '../../network/protocol';
import { CollectionProgress } from './collection-paging';
import { PARQUET_VERSION } from './dataset-parquet';
import { CompiledDataset, ParquetFile } from './dataset-writer';
import { TaskRow } from './task.types';
import { lockTaskRow, TaskLock } from './task-row-lock';
import { rewrittenAtSql } from './written-at';

/** Arbitrary constant: the advisory lock that orders task completions (markCompleted). */
const COMPLETION_LOCK_ID = 7_013_000_006;

/**
 * An expired task whose final collection has a page left (finalPage, whose conditions these
 * are: the window's start is not after its end at expiry; before a collection at or after
 * expiry, that end is after the last newest-first page's end; after one, its range is still
 * being paged back): the page is due, and its compile waits for it, or for a failure (recorded
 * at or after expiry), but no longer than `waitMs` after expiry. SQL over the parameters named
 * `now` and `waitMs`.
 */
function awaitingFinalCollection(now: string, waitMs: string): string {
  return `(state IN ('active', 'compiling') AND expires_at <= ${now}::timestamptz
    AND expires_at > ${now}::timestamptz - make_interval(secs => ${waitMs} / 1000.0)
    AND (collect_failed_at IS NULL OR collect_failed_at < expires_at)
    AND (post_start IS NULL OR post_start <= least(post_end, expires_at))
    AND CASE WHEN last_collected_at >= expires_at THEN collect_cursor IS NOT NULL
      ELSE collect_head IS NULL OR collect_head < least(post_end, expires_at) END)`;
}

/**
 * A registered task's life after registration: its collections (the items and where paging got
 * to), then its compile into a dataset. Registration and the reads clients make are
 * TasksRepository's.
 */
@Injectable()
export class TaskLifecycleRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /**
   * Active tasks whose last collection is an interval old and whose post window has begun,
   * heaviest first. One whose collection failed waits `retryMs` × 2^(failures − 1), at most an
   * interval, after the failure: retryDelay(failures − 1, retryMs, intervalMs), in SQL.
   * Before them, expired tasks awaiting their final collection (awaitingFinalCollection), due at
   * once: their compile waits for it. Those yet to have their first final page go before those
   * paging back: each task's last hour is asked for before any task's older posts.
   */
  dueForCollection(
    now: Date,
    intervalMs: number,
    retryMs: number,
    limit: number,
  ): Promise<TaskRow[]> {
    return this.dataSource.query(
      `SELECT * FROM scraping_tasks WHERE (state = 'active' AND expires_at > $1
         AND (post_start IS NULL OR post_start <= $1)
         AND (last_collected_at IS NULL OR last_collected_at <= $1::timestamptz - make_interval(secs => $2 / 1000.0))
         AND (collect_failed_at IS NULL OR collect_failed_at <= $1::timestamptz
              - make_interval(secs => ${retryDelaySql('collect_failures - 1', '$3', '$2')} / 1000.0)))
         OR ${awaitingFinalCollection('$1', '$2')}
       ORDER BY expires_at <= $1::timestamptz DESC, COALESCE(last_collected_at >= expires_at, false),
         weight DESC, last_collected_at NULLS FIRST, id
       LIMIT $4`,
      [now.toISOString(), intervalMs, retryMs, limit],
    );
  }

  /** A collection that failed: counted, and the task waits before the next (dueForCollection). */
  async recordCollectionFailure(taskId: string, now: Date): Promise<void> {
    await this.dataSource.query(
      `UPDATE scraping_tasks SET collect_failures = collect_failures + 1, collect_failed_at = $2
       WHERE id = $1`,
      [taskId, now.toISOString()],
    );
  }

  /**
   * Stores newly seen items (dedupe by uri within the task) and where the collection got to,
   * and returns how many were new, and how many were left out for lying outside the task's post
   * window (pages ask within it; this keeps a miner's stray answer out of the dataset too). An
   * item whose uri does not name it is left out, whichever path brought it, and the others are
   * kept under their uri's canonical form, so one post is one task item (see item-uri.ts).
   * An item of an author in the erased-authors register is left out by the INSERT itself
   * (notErasedSql: one statement, no read before it for an erasure to slip between), counted
   * neither as added nor as outside the window.
   */
  async addItems(
    taskId: string,
    offered: readonly DataItem[],
    progress: CollectionProgress,
    now: Date,
  ): Promise<{ added: number; outsideWindow: number }> {
    const items = offered.flatMap((item) => canonicalItem(item) ?? []);
    return this.dataSource.transaction(async (manager) => {
      const [{ added, outside_window: outsideWindow }] = await manager.query<
        { added: number; outside_window: number }[]
      >(
        `WITH offered AS (
           SELECT * FROM unnest($2::text[], $3::timestamptz[], $4::jsonb[], $6::smallint[],
                                $7::text[]) AS i(uri, datetime, item, source, author)
         ), kept AS (
           SELECT offered.* FROM offered JOIN scraping_tasks task ON task.id = $1
           WHERE (task.post_start IS NULL OR offered.datetime >= task.post_start)
             AND (task.post_end IS NULL OR offered.datetime <= task.post_end)
         ), inserted AS (
           INSERT INTO task_items (task_id, uri, datetime, item, collected_at)
           SELECT $1, uri, datetime, item, $5 FROM kept
           WHERE ${notErasedSql('kept.source', 'kept.author')}
           ON CONFLICT (task_id, uri) DO NOTHING RETURNING uri
         )
         SELECT (SELECT count(*)::int FROM inserted) AS added,
           (SELECT count(*)::int FROM offered) - (SELECT count(*)::int FROM kept) AS outside_window`,
        [
          taskId,
          items.map((item) => item.uri),
          items.map((item) => item.datetime),
          items.map((item) => JSON.stringify(item)),
          now.toISOString(),
          items.map((item) => sourceIdOfItem(item) ?? null),
          items.map(authorOfItem),
        ],
      );
      await manager.query(
        `UPDATE scraping_tasks SET items_collected = items_collected + $2, collections = collections + 1, last_collected_at = $3,
           collect_failures = 0, collect_failed_at = NULL,
           collect_head = $4, collect_cursor = $5, collect_floor = $6, collect_back_next = $7
         WHERE id = $1`,
        [
          taskId,
          added,
          now.toISOString(),
          progress.head?.toISOString() ?? null,
          progress.cursor?.toISOString() ?? null,
          progress.floor?.toISOString() ?? null,
          progress.backNext,
        ],
      );
      return { added, outsideWindow };
    });
  }

  /**
   * Moves expired active tasks to `compiling` and returns the tasks that are compiling, but for
   * those whose last compile failed less than `retryMs` × 2^(attempts − 1) ago, at most
   * `retryMaxMs` (retryDelay(attempts − 1, retryMs, retryMaxMs), in SQL),
   * and those still awaiting their final collection (awaitingFinalCollection, at most
   * `finalWaitMs` after expiry).
   */
  async claimExpired(
    now: Date,
    retryMs: number,
    finalWaitMs: number,
    retryMaxMs: number,
  ): Promise<TaskRow[]> {
    await this.dataSource.query(
      `UPDATE scraping_tasks SET state = 'compiling' WHERE state = 'active' AND expires_at <= $1`,
      [now.toISOString()],
    );
    return this.dataSource.query(
      `SELECT * FROM scraping_tasks WHERE state = 'compiling'
         AND (compile_failed_at IS NULL OR compile_failed_at <= $1::timestamptz
              - make_interval(secs => ${retryDelaySql('compile_attempts - 1', '$2', '$4')} / 1000.0))
         AND NOT ${awaitingFinalCollection('$1', '$3')}
       ORDER BY expires_at, id`,
      [now.toISOString(), retryMs, finalWaitMs, retryMaxMs],
    );
  }

  /** Items of a task in dataset order, in pages (never the whole task in memory). */
  itemsPage(
    taskId: string,
    afterUri: string | null,
    afterTime: Date | null,
    limit: number,
  ): Promise<{ uri: string; datetime: Date; item: unknown }[]> {
    return this.dataSource.query(
      `SELECT uri, datetime, item FROM task_items
       WHERE task_id = $1 AND ($2::timestamptz IS NULL OR (datetime, uri) > ($2::timestamptz, $3::text))
       ORDER BY datetime, uri LIMIT $4`,
      [taskId, afterTime?.toISOString() ?? null, afterUri, limit],
    );
  }

  /**
   * Runs `work` in a transaction that holds the task row's lock (SELECT … FOR UPDATE) from its
   * start, and commits. A compile renames each file into place, checks its files and marks the
   * task `completed`, and removes its files, only under it: no other compile's rename or
   * completion falls between a check and what follows it (docs/decisions.md, "Scraping task
   * lifecycle"). `work` holds a connection: it does file operations only, no long work.
   */
  lockTask<T>(taskId: string, work: (lock: TaskLock) => Promise<T>): Promise<T> {
    return lockTaskRow(this.dataSource, taskId, work);
  }

  /**
   * Completes a task; false when it was no longer compiling, so nothing was recorded (another
   * replica's compile completed it first, or it failed). Its `completed_at` is `now`, or a
   * millisecond after the last task's if that is later: completion times only grow and never
   * tie, so a pipeline polling `completed_after` the last time it saw misses none, even across a
   * compiler moving between replicas whose clocks disagree. A Parquet file written with it was
   * written then (`parquet_written_at`, the same time), and so was the JSON lines file
   * (`dataset_written_at`: set, not left null to be read as `completed_at`, so that a null says
   * only "recorded by a release before migration 1765010000000"). Its stored items stay: the prune
   * pass deletes them later (completedWithItems), as a second compile of the task may be reading
   * them right now. Given `lock` (lockTask), in the lock's transaction.
   *
   * Completions take turns (an advisory lock held to the commit): two compiles completing at
   * once (one of them with its job lock lost) each read the last time before the other had
   * committed, so they could tie, or the later time commit first, and a poller that had seen it
   * missed the other for good (a collation audit).
   */
  async markCompleted(
    taskId: string,
    dataset: CompiledDataset,
    now: Date,
    lock?: TaskLock,
  ): Promise<boolean> {
    const complete = async (manager: EntityManager) => {
      await manager.query('SELECT pg_advisory_xact_lock($1)', [COMPLETION_LOCK_ID]);
      return this.completeIn(manager, taskId, dataset, now);
    };
    return lock ? complete(lock.manager) : this.dataSource.transaction(complete);
  }

  /** markCompleted's update, in a transaction that holds the completion lock. */
  private async completeIn(
    manager: EntityManager,
    taskId: string,
    dataset: CompiledDataset,
    now: Date,
  ): Promise<boolean> {
    const result: unknown = await manager.query(
      `WITH completion AS (
         SELECT GREATEST($2::timestamptz, max(completed_at) + interval '1 millisecond') AS at
         FROM scraping_tasks)
       UPDATE scraping_tasks SET state = 'completed', completed_at = completion.at,
       dataset_file = $3, dataset_rows = $4, dataset_bytes = $5,
       dataset_sha256 = $6, data_start = $7, data_end = $8, failure_reason = NULL,
       parquet_file = $9, parquet_bytes = $10, parquet_sha256 = $11,
       parquet_version = CASE WHEN $9::text IS NULL THEN NULL ELSE $12::smallint END,
       parquet_written_at = CASE WHEN $9::text IS NULL THEN NULL ELSE completion.at END,
       dataset_written_at = completion.at
     FROM completion
     WHERE id = $1 AND state = 'compiling'`,
      [
        taskId,
        now.toISOString(),
        dataset.file,
        dataset.rows,
        dataset.bytes,
        dataset.sha256,
        dataset.start?.toISOString() ?? null,
        dataset.end?.toISOString() ?? null,
        dataset.parquet?.file ?? null,
        dataset.parquet?.bytes ?? null,
        dataset.parquet?.sha256 ?? null,
        PARQUET_VERSION,
      ],
    );
    return affectedCount(result) > 0;
  }

  /**
   * When the earliest completed task that still has stored items completed (null: none has), so
   * that a pruner that found none due knows when one will be.
   */
  async earliestCompletedWithItems(skip: readonly string[]): Promise<Date | null> {
    const [row] = await this.dataSource.query<{ completed_at: Date | null }[]>(
      `SELECT min(completed_at) AS completed_at FROM scraping_tasks task
       WHERE state = 'completed' AND dataset_file IS NOT NULL AND NOT (id = ANY($1::varchar[]))
         AND EXISTS (SELECT 1 FROM task_items item WHERE item.task_id = task.id)`,
      [skip],
    );
    return row?.completed_at ?? null;
  }

  /**
   * Completed tasks whose items are still stored, completed at or before `completedBefore` (or
   * by a release that recorded no completion time), oldest completed first, but for the ids in
   * `skip`.
   */
  completedWithItems(
    skip: readonly string[],
    completedBefore: Date,
    limit: number,
  ): Promise<Pick<TaskRow, 'id' | 'dataset_file' | 'dataset_bytes' | 'dataset_sha256'>[]> {
    return this.dataSource.query(
      `SELECT id, dataset_file, dataset_bytes, dataset_sha256 FROM scraping_tasks task
       WHERE state = 'completed' AND dataset_file IS NOT NULL AND NOT (id = ANY($1::varchar[]))
         AND (completed_at IS NULL OR completed_at <= $2)
         AND EXISTS (SELECT 1 FROM task_items item WHERE item.task_id = task.id)
       ORDER BY completed_at NULLS FIRST, id LIMIT $3`,
      [skip, completedBefore.toISOString(), limit],
    );
  }

  /** Deletes the stored items of a task, if it is completed (its dataset file holds them). */
  async deleteCompletedItems(taskId: string): Promise<number> {
    const result: unknown = await this.dataSource.query(
      `DELETE FROM task_items WHERE task_id = $1
         AND EXISTS (SELECT 1 FROM scraping_tasks WHERE id = $1 AND state = 'completed')`,
      [taskId],
    );
    return affectedCount(result);
  }

  /**
   * Records the Parquet file of a completed task written after its compile, and answers when the
   * task says it was written (null when the task is not completed), so that its `Last-Modified`
   * moves only with its bytes, and always when they change:
   * - the file recorded (the writer is deterministic, the same bytes have not changed since):
   *   the time recorded before (a release before migration 1764930000000 recorded none: the
   *   completion's, which a client holding these bytes cannot have seen later);
   * - another file: `now`, but at least the second after the time recorded before
   *   (rewrittenAtSql, as an erasure's JSON lines file is dated).
   * Recorded only while the task records the JSON lines file the Parquet file was made from
   * (`datasetSha256`): an erasure that rewrote the dataset meanwhile removed the file and
   * cleared its record, which a conversion of the old rows must not bring back.
   */
  async recordParquet(
    taskId: string,
    parquet: ParquetFile,
    now: Date,
    datasetSha256: string,
  ): Promise<Date | null> {
    const [row] = returningRows<{ parquet_written_at: Date | null }>(
      await this.dataSource.query(
        `UPDATE scraping_tasks SET parquet_file = $2, parquet_bytes = $3, parquet_sha256 = $4,
         parquet_version = $5,
         parquet_written_at = CASE WHEN parquet_sha256 = $4
           THEN COALESCE(parquet_written_at, completed_at, $6::timestamptz)
           ELSE ${rewrittenAtSql('$6', 'COALESCE(parquet_written_at, completed_at)')} END
       WHERE id = $1 AND state = 'completed' AND dataset_sha256 = $7
       RETURNING parquet_written_at`,
        [
          taskId,
          parquet.file,
          parquet.bytes,
          parquet.sha256,
          PARQUET_VERSION,
          now.toISOString(),
          datasetSha256,
        ],
      ),
    );
    return row?.parquet_written_at ?? null;
  }

  /**
   * Counts a failed compile attempt at `now` (the next waits: claimExpired); past `maxAttempts`
   * the task is `failed`. Answers the task's state and attempts after it, or null when the task
   * was no longer compiling, so nothing was counted: it completed meanwhile (an attempt whose
   * completion committed though its answer was lost, or another replica's).
   */
  async recordCompileFailure(
    taskId: string,
    reason: string,
    maxAttempts: number,
    now: Date,
  ): Promise<CompileFailureCount | null> {
    const result: unknown = await this.dataSource.query(
      `UPDATE scraping_tasks SET compile_attempts = compile_attempts + 1, failure_reason = $2,
         compile_failed_at = $4,
         state = CASE WHEN compile_attempts + 1 >= $3 THEN 'failed' ELSE state END
       WHERE id = $1 AND state = 'compiling'
       RETURNING state, compile_attempts`,
      [taskId, reason, maxAttempts, now.toISOString()],
    );
    return returningRows<CompileFailureCount>(result)[0] ?? null;
  }
}

/** A task after a compile failure was counted: `failed` for good, or `compiling` still. */
export interface CompileFailureCount {
  state: 'compiling' | 'failed';
  compile_attempts: number;
}

import { rm } from 'node:fs/promises';
import { basename } from 'node:path';
import { Logger } from '@nestjs/common';
import { DAY_MS, HOUR_MS } from '../../common/clock/durations';
import { Clock } from '../../common/clock/clock';
import { MetricsService } from '../../common/metrics/metrics.service';
import { AppConfig } from '../../config/app-config';
import { answeredItem } from '../../network/answered-items';
import { DataItem } from '../../network/protocol';
import { currentItemShape, StoredItemShape } from '../../network/legacy-items';
import { itemKey } from '../../network/item-uri';
import {
  fileIdentity,
  removeIfUnchanged,
  RenameRefused,
  RenameWith,
  WriteStopped,
} from './atomic-file';
import { finalGap } from './collection-paging';
import { compileFailureReason, ItemConversionError } from './compile-failure';
import { parquetPathBeside } from './dataset-parquet';
import { datasetPath } from './dataset-path';
import { DatasetParquetService } from './dataset-parquet.service';
import { dropSameAside, keepCompleteDataset, vouchedDataset } from './complete-dataset';
import { DatasetRow, manifestPathOf, writeJsonLines, writeManifest } from './dataset-writer';
import { TaskRow } from './task.types';
import { TaskLifecycleRepository } from './task-lifecycle.repository';
import { TaskLock } from './task-row-lock';

const PAGE_SIZE = 1000;
/**
 * How long one pass goes on starting compiles: half the default tick, so a pass's collections
 * wait at most about this (plus the compile under way) behind the compiles.
 */
export const COMPILE_BUDGET_MS = 30_000;
/**
 * A failed compile is tried again an hour later, then after 2, 4, … hours: with the default
 * three attempts a task fails for good three hours after its first failure, not three ticks
 * (a full disk for three minutes failed every task expiring meanwhile).
 */
export const COMPILE_RETRY_MS = HOUR_MS;
/** The longest wait between compile attempts (when TASK_MAX_COMPILE_ATTEMPTS allows many). */
export const COMPILE_RETRY_MAX_MS = DAY_MS;

/**
 * A task's dataset at expiry: the task is marked `compiling` and, once its final collection is
 * done (TaskCollector), its stored items written as JSON lines (and Parquet) with a manifest,
 * and the task marked `completed` (or `failed` after repeated errors). A task left `compiling`
 * by a restart is compiled again from scratch, and so is one whose compile the service gave up
 * as it stopped (between pages, or while writing the Parquet file). Run by TaskLifecycleService's
 * pass.
 */
export class TaskCompiler {
  constructor(
    private readonly repository: TaskLifecycleRepository,
    private readonly parquet: DatasetParquetService,
    private readonly clock: Clock,
    private readonly config: AppConfig,
    private readonly logger: Logger,
    /**
     * Whether the service is shutting down: its pass then starts no more compiles, and gives up
     * the one under way.
     */
    private readonly stopping: () => boolean,
    /** Each failed attempt by reason: gateway_task_compile_failures_total. */
    private readonly metrics: MetricsService,
  ) {}

  /**
   * Compiles expired tasks, oldest first, for at most `budgetMs` of a pass (at least one task):
   * the tasks left stay `compiling` for the next passes, and the collections run between them.
   * A vote's jobs expire together, and compiling them back to back (about 9 s a full task) had
   * stopped every collection for as long as 40 minutes (an audit's finding). Answers how many
   * tasks it completed: not a compile that failed or was given up (at shutdown, or to another
   * replica's compile of the task).
   */
  async compileExpired(budgetMs = COMPILE_BUDGET_MS): Promise<number> {
    // A task's final collection is waited for an interval at most: as long as a due collection
    // may wait on the budget before the task shows as behind (docs/decisions.md, "Scraping task
    // lifecycle").
    const compiling = await this.repository.claimExpired(
      this.clock.now(),
      COMPILE_RETRY_MS,
      this.config.tasks.collectIntervalMs,
      COMPILE_RETRY_MAX_MS,
    );
    // Real time, as the job's timers are: the clock may be moved by tests or a simulation.
    const started = performance.now();
    let tried = 0;
    let completed = 0;
    // Stopping, the tasks left stay `compiling` for the next pass, on any replica: shutdown waits
    // for this pass, and a replica killed mid-compile (its grace period over) leaves more to redo.
    for (const task of compiling) {
      if (this.stopping()) break;
      if (tried > 0 && performance.now() - started >= budgetMs) {
        this.logger.log(`${compiling.length - tried} tasks left compiling for the next pass`);
        break;
      }
      tried += 1;
      if (await this.compile(task)) completed += 1;
    }
    return completed;
  }

  /**
   * Compiles one task; true when it completed it. Each rename into place, the check of the files
   * with the `completed` update, and each removal hold the task row's lock (lockTask), as every
   * compile's do: a rename is refused once the task is no longer `compiling`, and none falls
   * between the check and the update (docs/decisions.md, "Scraping task lifecycle").
   */
  private async compile(task: TaskRow): Promise<boolean> {
    this.warnOfFinalGap(task);
    const path = datasetPath(this.config.dataDir, task.id);
    // The files this attempt renamed into place, by path: removed if it gives up or fails.
    const written = new Map<string, string>();
    // The task is claimed by a snapshot (claimExpired): another replica's compile, its job lock
    // lost, may have completed it since, and its files are the dataset the task records. The
    // identity is taken under the lock too: no other rename can have come between.
    const renameOwn =
      (file: string): RenameWith =>
      (rename) =>
        this.repository.lockTask(task.id, async (lock) => {
          if (lock.state !== 'compiling') throw new NoLongerCompilingError();
          await rename();
          const identity = await fileIdentity(file);
          if (identity !== undefined) written.set(file, identity);
        });
    try {
      const vouched = await vouchedDataset(task.id, path);
      const aside = await this.repository.lockTask(task.id, async (lock) => {
        if (lock.state !== 'compiling') throw new NoLongerCompilingError();
        // Nothing set aside when nothing vouched for is there.
        if (!vouched) return undefined;
        return keepCompleteDataset(this.logger, task.id, path, vouched, this.clock.now());
      });
      const jsonl = await writeJsonLines(path, this.pages(task.id), renameOwn(path));
      const parquet = await this.parquet.tryWrite(task, jsonl, {
        stopping: this.stopping,
        renameWith: renameOwn(parquetPathBeside(path)),
      });
      const dataset = { ...jsonl, parquet };
      const now = this.clock.now();
      await writeManifest(task, dataset, now, renameOwn(manifestPathOf(path)));
      // Another compile (its job lock lost) may have renamed its files over these and then,
      // failing, removed them as its own: completed, the task would name a file no longer there,
      // every download a 503 for good (an audit's finding). Not this compile's failure, none is
      // counted: the task stays `compiling`, completed by that compile or compiled again.
      const replaced = await this.repository.lockTask(task.id, async (lock) => {
        if (lock.state !== 'compiling') throw new NoLongerCompilingError();
        const first = await firstReplaced(written);
        if (first !== undefined) return first;
        // Found `compiling` under the lock, the update cannot miss; said, not assumed.
        if (!(await this.repository.markCompleted(task.id, dataset, now, lock)))
          throw new NoLongerCompilingError();
        return undefined;
      });
      if (replaced !== undefined) {
        this.logger.warn(
          { task_id: task.id },
          `task ${task.id}: ${basename(replaced)} was replaced by another compile meanwhile; the task stays compiling`,
        );
        await this.discard(task.id, path, written);
        return false;
      }
      this.logger.log(
        { task_id: task.id },
        `task ${task.id}: dataset of ${jsonl.rows} rows, ${jsonl.bytes} bytes, sha256 ${jsonl.sha256}` +
          (dataset.parquet ? `; Parquet ${dataset.parquet.bytes} bytes` : ''),
      );
      if (aside?.sha256 === jsonl.sha256) await dropSameAside(this.logger, task.id, aside);
      return true;
    } catch (error) {
      if (error instanceof WriteStopped) {
        // A full task's compile outlasted the grace period of a stop, and was killed anyway (an
        // audit's finding). Not the task's failure: none is counted. A JSON lines file renamed
        // into place stays, as a kill would leave it: the next compile renames over it, and a
        // task failing for good removes it (discard).
        this.logger.log(
          { task_id: task.id },
          `task ${task.id}: compile given up at shutdown; the task stays compiling, compiled again at the next pass`,
        );
        return false;
      }
      if (error instanceof NoLongerCompilingError) {
        // Not this compile's failure. The files the task records (if completed) are the other
        // compile's, checked under the lock: this one's still in place are strays.
        this.logger.warn(
          { task_id: task.id },
          `task ${task.id}: completed or failed elsewhere meanwhile; this compile's dataset discarded`,
        );
        await this.discard(task.id, path, written);
        return false;
      }
      const { message } = error as Error;
      // A write stream's error names no file (`ENOSPC: no space left on device, write`): the
      // line names it, so that the operator knows which volume filled (an on-call audit).
      const where = isFileErrorWithoutPath(error) ? ` (writing ${path})` : '';
      this.logger.error(
        { task_id: task.id },
        `task ${task.id}: compile failed: ${message}${where}`,
      );
      // Counted at each attempt: the task shows `failed` only after the last of them, hours later.
      this.metrics.recordCompileFailure(compileFailureReason(error));
      const counted = await this.repository.recordCompileFailure(
        task.id,
        failureReasonOf(error as Error),
        this.config.tasks.maxCompileAttempts,
        this.clock.now(),
      );
      // The attempt's line above reads like any other's: this one says the task is lost for good
      // (its dataset will never be made until the master key has it recompiled).
      if (counted?.state === 'failed')
        this.logger.error(
          { task_id: task.id, reason: message, compile_attempts: counted.compile_attempts },
          `task ${task.id} failed for good after ${counted.compile_attempts} compile attempts: ${message}`,
        );
      // Left, they stayed for good beside a task `failed` (an audit's finding). Only while the
      // task was still compiling: completed meanwhile (its `completed` update committed though
      // its answer was lost), the files are its dataset.
      if (counted) await this.discard(task.id, path, written);
      return false;
    }
  }

  /**
   * Under the task row's lock, removes the files this compile renamed into place (`written`)
   * that are still the same files: one another compile renamed over them is that compile's, and
   * stays. A task `failed` for good loses every file at its dataset's paths, whichever compile
   * left them (one given up at shutdown, or killed): none completes it any more. A failure to
   * remove is logged: the files stay, as they did before any removal.
   */
  private async discard(
    taskId: string,
    path: string,
    written: ReadonlyMap<string, string>,
  ): Promise<void> {
    try {
      await this.repository.lockTask(taskId, (lock) => removeFiles(lock, path, written));
    } catch (error) {
      this.logger.warn(
        { task_id: taskId },
        `task ${taskId}: the files of a compile given up or failed could not be removed: ${(error as Error).message}`,
      );
    }
  }

  /**
   * Says what the task's final collection did not reach, if anything: its wait (an interval
   * after expiry) ran out, or a page failed, before the pages came back short of a full page.
   * The range stays on the task (collect_floor, collect_cursor), and the completed task shows it
   * as its dataset's `gap` (task.mapper.ts, from the same finalGap; docs/decisions.md,
   * "Scraping task lifecycle").
   */
  private warnOfFinalGap(task: TaskRow): void {
    const missed = finalGap(task);
    if (!missed) return;
    const start = missed.start?.toISOString() ?? "the window's start";
    this.logger.warn(
      { task_id: task.id },
      `task ${task.id}: its final collection did not reach the posts of ${start} to ${missed.end.toISOString()}; the dataset lacks them`,
    );
  }

  /**
   * The task's items in dataset order, one per post (itemKey), the first in that order: rows are
   * unique by canonical uri, which keeps the record's spelling (an X handle's case, a Reddit
   * slug), so collections that got one post from miners spelling it otherwise stored it twice,
   * as stored answers once held it twice (docs/decisions.md, "Scraping task lifecycle").
   * Throws WriteStopped before reading a page once the service is stopping.
   */
  private async *pages(taskId: string): AsyncGenerator<DatasetRow> {
    const posts = new Set<string>();
    let after: { uri: string; datetime: Date } | null = null;
    for (;;) {
      if (this.stopping()) throw new WriteStopped();
      const page = await this.repository.itemsPage(
        taskId,
        after?.uri ?? null,
        after?.datetime ?? null,
        PAGE_SIZE,
      );
      for (const row of page) {
        const { item, post } = readRow(row);
        if (posts.has(post)) continue;
        posts.add(post);
        // Written as answered: a dataset's lines are the on-demand items' shapes, dates and all.
        yield { ...row, item: answeredItem(item) };
      }
      if (page.length < PAGE_SIZE) return;
      after = page[page.length - 1];
    }
  }
}

/**
 * A stored row's item in the current shape (rows collected by an earlier release hold the
 * earlier item shapes) and its post (itemKey); ItemConversionError if it cannot be read so.
 */
function readRow(row: DatasetRow): { item: DataItem; post: string } {
  try {
    const item = currentItemShape(row.item as StoredItemShape);
    return { item, post: itemKey(item) };
  } catch (error) {
    throw new ItemConversionError(error);
  }
}

/** The first of the files a compile renamed into place that is no longer the same file there. */
async function firstReplaced(written: ReadonlyMap<string, string>): Promise<string | undefined> {
  for (const [file, identity] of written) if ((await fileIdentity(file)) !== identity) return file;
  return undefined;
}

/** A compile found its task no longer `compiling` before it renamed a file or completed it. */
class NoLongerCompilingError extends RenameRefused {
  constructor() {
    super('the task is no longer compiling');
  }
}

/** discard's removal, under the task row's `lock`. */
async function removeFiles(
  lock: TaskLock,
  path: string,
  written: ReadonlyMap<string, string>,
): Promise<void> {
  if (lock.state === 'failed') {
    for (const file of [path, parquetPathBeside(path), manifestPathOf(path)])
      await rm(file, { force: true });
    return;
  }
  for (const [file, identity] of written) await removeIfUnchanged(file, identity);
}

/** A file system call's error (it has a `syscall`) that names no file. */
function isFileErrorWithoutPath(error: unknown): boolean {
  const { syscall, path } = error as NodeJS.ErrnoException;
  return typeof syscall === 'string' && path === undefined;
}

/**
 * Why a compile failed, as the task's `failure_reason` tells anyone with a key: the error
 * without the server's directories. Node's file errors name the path they failed on
 * (`ENOSPC: no space left on device, write '/srv/data/datasets/…'`); the file's own name is
 * kept, the directories it is in are not. The log keeps the whole message.
 */
function failureReasonOf(error: Error): string {
  const { path, dest } = error as NodeJS.ErrnoException & { dest?: unknown };
  let reason = error.message;
  for (const file of [path, dest])
    if (typeof file === 'string' && file !== '') reason = reason.split(file).join(basename(file));
  return reason;
}

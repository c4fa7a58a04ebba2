import { basename } from 'node:path';
import {
  BeforeApplicationShutdown,
  Injectable,
  Logger,
  OnApplicationBootstrap,
  OnModuleDestroy,
} from '@nestjs/common';
import { Clock } from '../../common/clock/clock';
import { parseIsoDate } from '../../common/validation/iso-date';
import { JobRunner } from '../../common/jobs/job-runner';
import { inPool } from '../../common/jobs/in-pool';
import { PeriodicJob } from '../../common/jobs/periodic-job';
import { AppConfig } from '../../config/app-config';
import { InjectConfig } from '../../config/config.module';
import { currentItemShape, StoredItemShape } from '../../network/legacy-items';
import { itemKey } from '../../network/item-uri';
import { NetworkService } from '../../network/network.service';
import { NetworkQueryResult } from '../../network/query-result';
import { fileIdentity, removeIfUnchanged, removeStalePartials } from './atomic-file';
import { afterPage, CollectionProgress, nextPage, progressWithin } from './collection-paging';
import { datasetFileHere, datasetPath, datasetsDirectory } from './dataset-path';
import { DatasetParquetService } from './dataset-parquet.service';
import {
  DatasetRow,
  manifestPathOf,
  sizeOnDisk,
  writeJsonLines,
  writeManifest,
} from './dataset-writer';
import { TaskRow } from './task.types';
import { TaskLifecycleRepository } from './task-lifecycle.repository';

export const TASK_LIFECYCLE_JOB = 'task-lifecycle';
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
export const COMPILE_RETRY_MS = 3_600_000;
/**
 * Completed tasks whose stored items one pass deletes: about 20,000 rows a full task, so a
 * pass's deletes stay within seconds.
 */
const PRUNE_TASKS_PER_PASS = 10;
const PRUNE_IDLE_MS = 3_600_000;
/**
 * How long a completed task keeps its stored items: far longer than any compile pass, so a
 * second compile of the task (another replica's, its job lock lost) never reads them cut short.
 * See docs/decisions.md, "Scraping task lifecycle".
 */
export const PRUNE_GRACE_MS = 3_600_000;

/**
 * Moves tasks through their lives: while `active`, collects matching data from miners every
 * TASK_COLLECT_INTERVAL through the network's on-demand machinery (same checks, dedupe by uri);
 * at expiry marks them `compiling`, writes the dataset and marks them `completed` (or `failed`
 * after repeated errors). States live in Postgres, so a restart resumes where it stopped: a task
 * left `compiling` is compiled again from scratch. One replica runs it at a time.
 */
@Injectable()
export class TaskLifecycleService
  implements OnApplicationBootstrap, OnModuleDestroy, BeforeApplicationShutdown
{
  private readonly logger = new Logger(TaskLifecycleService.name);
  private readonly job: PeriodicJob<{ collected: number; compiled: number }>;
  private stopping = false;
  /** Completed tasks whose dataset file was missing: their stored items are kept. */
  private readonly unprunable = new Set<string>();
  /** Until when (performance.now()) no completed task is looked for to prune. */
  private pruneIdleUntil = 0;

  constructor(
    private readonly repository: TaskLifecycleRepository,
    private readonly network: NetworkService,
    jobs: JobRunner,
    private readonly clock: Clock,
    @InjectConfig() private readonly config: AppConfig,
    private readonly parquet: DatasetParquetService,
  ) {
    this.job = new PeriodicJob(
      jobs,
      TASK_LIFECYCLE_JOB,
      config.tasks.tickMs,
      () => this.runOnce(),
      this.logger,
    );
  }

  onApplicationBootstrap(): void {
    this.job.start();
  }

  onModuleDestroy(): void {
    this.stopping = true;
    this.job.stop();
  }

  /** After the miner client aborted its calls (onModuleDestroy), a running pass ends quickly. */
  beforeApplicationShutdown(): Promise<void> {
    return this.job.settled();
  }

  /**
   * One pass: collect what is due, then compile what expired (also used by tests), then delete
   * the stored items of tasks completed before compiles did, then remove the partial files
   * crashed writers left (compiles', and downloads' Parquet rewrites').
   */
  async runOnce(): Promise<{ collected: number; compiled: number }> {
    const collected = await this.collectDue();
    const compiled = await this.compileExpired();
    await this.pruneCompletedItems();
    // On the real clock: file times are the file system's, not the service's clock.
    await removeStalePartials(datasetsDirectory(this.config.dataDir), new Date());
    return { collected, compiled };
  }

  /**
   * Collects the due tasks the budget allows, heaviest first: a tick's worth of
   * TASK_COLLECT_PER_MINUTE (one pass runs at a time across replicas), at most
   * TASK_COLLECT_CONCURRENCY at once. Collections share the miners with users' queries; bounded
   * so, they never flood them. Due tasks left over wait for the next pass, and show as behind
   * once a whole interval passed without a collection. (The pass is not spread over the tick:
   * the job runs again only once a tick passed since the last pass ended.)
   */
  async collectDue(budget = this.passBudget()): Promise<number> {
    const { collectIntervalMs, collectConcurrency, tickMs } = this.config.tasks;
    const now = this.clock.now();
    // A failed collection is tried again a tick later, then after 2, 4, … ticks (at most an
    // interval): tried at every tick, it went ahead of the tasks that could be collected and
    // spent their share of the miners' calls.
    const due = await this.repository.dueForCollection(now, collectIntervalMs, tickMs, budget);
    await inPool(
      due,
      collectConcurrency,
      () => this.stopping,
      (task) =>
        this.collect(task, now).catch(async (error: Error) => {
          this.logger.warn(`task ${task.id}: collection failed: ${error.message}`);
          await this.repository.recordCollectionFailure(task.id, now).catch(() => undefined);
        }),
    );
    return due.length;
  }

  /** Collections one pass may start: a tick's worth of TASK_COLLECT_PER_MINUTE. */
  private passBudget(): number {
    const { collectPerMinute, tickMs } = this.config.tasks;
    return Math.max(1, Math.floor((collectPerMinute * tickMs) / 60_000));
  }

  /**
   * Compiles expired tasks, oldest first, for at most `budgetMs` of a pass (at least one task):
   * the tasks left stay `compiling` for the next passes, and the collections run between them.
   * A vote's jobs expire together, and compiling them back to back (about 9 s a full task) had
   * stopped every collection for as long as 40 minutes (an audit's finding).
   */
  async compileExpired(budgetMs = COMPILE_BUDGET_MS): Promise<number> {
    const compiling = await this.repository.claimExpired(this.clock.now(), COMPILE_RETRY_MS);
    // Real time, as the job's timers are: the clock may be moved by tests or a simulation.
    const started = performance.now();
    let compiled = 0;
    // Stopping, the tasks left stay `compiling` for the next pass, on any replica: shutdown waits
    // for this pass, and a replica killed mid-compile (its grace period over) leaves more to redo.
    for (const task of compiling) {
      if (this.stopping) break;
      if (compiled > 0 && performance.now() - started >= budgetMs) {
        this.logger.log(`${compiling.length - compiled} tasks left compiling for the next pass`);
        break;
      }
      await this.compile(task);
      compiled += 1;
    }
    return compiled;
  }

  /**
   * Deletes the stored items of up to `limit` tasks completed at least PRUNE_GRACE_MS ago, once
   * their JSON lines file is on disk with its recorded size, the file a download here would
   * serve (datasetFileHere: its name under this DATA_DIR, whatever directory the task
   * recorded): the file holds them. Not at completion: another replica may be compiling the
   * task at once, and read the rows after they were gone. A task whose file is not on disk so
   * is left alone, and said once (in this process): its items may be all that is left of its
   * dataset. Once none is left, looked for again an hour later.
   */
  async pruneCompletedItems(limit = PRUNE_TASKS_PER_PASS): Promise<number> {
    if (performance.now() < this.pruneIdleUntil) return 0;
    const completedBefore = new Date(this.clock.now().getTime() - PRUNE_GRACE_MS);
    const tasks = await this.repository.completedWithItems(
      [...this.unprunable],
      completedBefore,
      limit,
    );
    if (tasks.length === 0) this.pruneIdleUntil = performance.now() + PRUNE_IDLE_MS;
    let pruned = 0;
    for (const task of tasks) {
      if (this.stopping) break;
      const file = datasetFileHere(this.config.dataDir, task.dataset_file!);
      const size = await sizeOnDisk(file);
      if (size !== Number(task.dataset_bytes)) {
        this.unprunable.add(task.id);
        this.logger.warn(
          `task ${task.id}: its stored items are kept: its dataset file ${file} is missing or not the size recorded`,
        );
        continue;
      }
      const deleted = await this.repository.deleteCompletedItems(task.id);
      this.logger.log(
        `task ${task.id}: ${deleted} stored items deleted (its dataset file holds them)`,
      );
      pruned += 1;
    }
    return pruned;
  }

  private async collect(task: TaskRow, now: Date): Promise<void> {
    const progress = progressWithin(task, progressOf(task));
    const page = nextPage(task, progress, now);
    // A window yet to begin (dueForCollection leaves such tasks out): nothing to ask for.
    if (!page) return;
    const { collectLimit } = this.config.tasks;
    const result = await this.network.query(
      {
        source: task.platform,
        usernames: [],
        keywords: [task.label, task.keyword].filter(
          (keyword): keyword is string => keyword !== null,
        ),
        keywordMode: 'all',
        startDate: page.start,
        endDate: page.end,
        limit: collectLimit,
        newestFirst: true,
      },
      'task',
    );
    if (result.error) {
      // Cut short by shutdown (the miner client abandoned its calls): not the task's failure,
      // which would put its next collection off by a tick.
      if (this.stopping) return;
      this.logger.warn(`task ${task.id}: nothing collected: ${result.error}`);
      await this.repository.recordCollectionFailure(task.id, now);
      return;
    }
    const outcome = {
      // A miner that sent the limit may hold more, though the checks dropped some of what it
      // sent: judged on the checked items alone, paging back stopped early (an audit's finding).
      full: result.items.length >= collectLimit || result.limitReached === true,
      completeFrom: completeFrom(result),
    };
    const { added, outsideWindow } = await this.repository.addItems(
      task.id,
      result.items,
      afterPage(progress, page, outcome),
      now,
    );
    this.logger.log(
      `task ${task.id}: ${added} new items (${result.items.length} returned by ${result.minersResponded} miners, ${page.kind} page` +
        (outsideWindow > 0 ? `; ${outsideWindow} outside the post window left out)` : ')'),
    );
  }

  private async compile(task: TaskRow): Promise<void> {
    const path = datasetPath(this.config.dataDir, task.id);
    // The files this attempt renamed into place, by path: removed if it fails after all.
    const written = new Map<string, string>();
    const keep = async (file: string) => {
      const identity = await fileIdentity(file);
      if (identity !== undefined) written.set(file, identity);
    };
    // The task is claimed by a snapshot (claimExpired): another replica's compile, its job lock
    // lost, may have completed it since, and its files are the dataset the task records.
    const stillCompiling = async () => {
      if (!(await this.repository.isCompiling(task.id))) throw new NoLongerCompilingError();
    };
    try {
      const jsonl = await writeJsonLines(path, this.pages(task.id), stillCompiling);
      await keep(jsonl.file);
      const dataset = { ...jsonl, parquet: await this.parquet.tryWrite(task, jsonl) };
      if (dataset.parquet) await keep(dataset.parquet.file);
      const now = this.clock.now();
      await writeManifest(task.id, dataset, now, stillCompiling);
      await keep(manifestPathOf(jsonl.file));
      if (!(await this.repository.markCompleted(task.id, dataset, now))) {
        // Between the last check and now: the files renamed are of the same stored items (kept
        // PRUNE_GRACE_MS after completion), and the prune pass checks their size.
        this.logger.warn(
          `task ${task.id}: completed or failed elsewhere while this compile renamed its files; nothing recorded`,
        );
        return;
      }
      this.logger.log(
        `task ${task.id}: dataset of ${jsonl.rows} rows, ${jsonl.bytes} bytes, sha256 ${jsonl.sha256}` +
          (dataset.parquet ? `; Parquet ${dataset.parquet.bytes} bytes` : ''),
      );
    } catch (error) {
      if (error instanceof NoLongerCompilingError) {
        // Not this compile's failure: the files in place (a file this attempt renamed before
        // included) are the dataset now, and stay.
        this.logger.warn(
          `task ${task.id}: completed or failed elsewhere meanwhile; this compile's dataset left unused`,
        );
        return;
      }
      this.logger.error(`task ${task.id}: compile failed: ${(error as Error).message}`);
      const counted = await this.repository.recordCompileFailure(
        task.id,
        failureReasonOf(error as Error),
        this.config.tasks.maxCompileAttempts,
        this.clock.now(),
      );
      // Left, they stayed for good beside a task `failed` (an audit's finding). Only while the
      // task was still compiling: completed meanwhile, the files are its dataset. Only files no
      // other replica (a second compile, its job lock lost) has renamed over since.
      if (counted) for (const [file, identity] of written) await removeIfUnchanged(file, identity);
    }
  }

  /**
   * The task's items in dataset order, one per post (itemKey), the first in that order: rows are
   * unique by canonical uri, which keeps the record's spelling (an X handle's case, a Reddit
   * slug), so collections that got one post from miners spelling it otherwise stored it twice,
   * as stored answers once held it twice (docs/decisions.md, "Scraping task lifecycle").
   */
  private async *pages(taskId: string): AsyncGenerator<DatasetRow> {
    const posts = new Set<string>();
    let after: { uri: string; datetime: Date } | null = null;
    for (;;) {
      const page = await this.repository.itemsPage(
        taskId,
        after?.uri ?? null,
        after?.datetime ?? null,
        PAGE_SIZE,
      );
      for (const row of page) {
        // Rows collected by an earlier release hold the earlier item shapes.
        const item = currentItemShape(row.item as StoredItemShape);
        const post = itemKey(item);
        if (posts.has(post)) continue;
        posts.add(post);
        yield { ...row, item };
      }
      if (page.length < PAGE_SIZE) return;
      after = page[page.length - 1];
    }
  }
}

/** A compile found its task no longer `compiling` before it renamed a file into place. */
class NoLongerCompilingError extends Error {}

function progressOf(task: TaskRow): CollectionProgress {
  return {
    head: task.collect_head,
    cursor: task.collect_cursor,
    floor: task.collect_floor,
    backNext: task.collect_back_next,
  };
}

/** The oldest item's time: asked newest first, the answer holds everything found after it. */
function completeFrom(result: NetworkQueryResult): Date | null {
  if (result.items.length === 0) return null;
  return new Date(Math.min(...result.items.map((item) => parseIsoDate(item.datetime)!.getTime())));
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

import { rm } from 'node:fs/promises';
import { Clock } from '../../common/clock/clock';
import { isLockTimeout } from '../../database/lock-timeout';
import { Source } from '../../common/source';
import { RenameRefused } from './atomic-file';
import { stateAt, VouchedDataset, vouchedDataset } from './complete-dataset';
import { parquetPathBeside } from './dataset-parquet';
import { datasetFileHere } from './dataset-path';
import { DatasetRecordsRepository } from './dataset-records.repository';
import { datasetLines } from './dataset-lines';
import {
  DatasetRow,
  howFileDiffers,
  JsonLinesFile,
  writeJsonLines,
  writeManifest,
} from './dataset-writer';
import { CompletedTask } from './task.types';

/** Whether a dataset's row (an item, parsed from its line) is one to take out. */
export type ErasedRow = (item: unknown) => boolean;

/** How long an erasure waits for a task row's lock before it reports the dataset busy. */
export const ERASURE_LOCK_TIMEOUT_MS = 30_000;

/** What an erasure did, or would do (a dry run), to one completed task's dataset. */
export type DatasetErasureOutcome = {
  taskId: string;
  /**
   * An earlier run's rewrite whose commit was lost after its rename (the new file and its
   * manifest in place, the old record): recorded by this run first, or, in a dry run, to be.
   * The rest of the outcome is this run's erasure from the dataset as then recorded.
   */
  earlierRun?: 'finished' | 'to-finish';
} & /** None of its rows is erased: its files are left as they are. */ (
  | { outcome: 'untouched' }
  /** `removed` rows taken out (or to be, in a dry run), `rows` left. */
  | { outcome: 'rewritten' | 'to-rewrite'; removed: number; rows: number }
  /**
   * Not read: its file is not the one the task records (`why`), so it is not served either; or
   * it changed while it was rewritten (another erasure), its row stayed locked (busy), or it
   * could not be read or written.
   */
  | { outcome: 'not-checked'; why: string }
);

/** The datasets an erasure went through, and the tasks of the source still compiling. */
export interface DatasetsErasure {
  datasets: DatasetErasureOutcome[];
  compiling: string[];
}

/**
 * Takes rows out of completed tasks' datasets: the JSON lines file written again without them,
 * the Parquet file made from the old rows removed (the next Parquet download makes it again),
 * the manifest rewritten (naming the file it replaces), and the task's record of the file
 * (size, SHA-256, rows) changed in the transaction that renames the new file into place, under
 * the task row's lock, as a compile records its dataset. A download that opened the old file
 * before the rename sends the old bytes under the old hash, or fails as a changed file
 * (recordedBytes); one of the old record and the new file (a replica reading the row just
 * before the commit) finds another size or other bytes than the hash names, and answers 503 as
 * for a missing file. Only ever the recorded file is rewritten; one that is not as recorded is
 * left for the operator, unless its manifest says it is an earlier erasure's rewrite of the
 * recorded file whose commit was lost: that one is recorded (finishEarlier).
 */
export class DatasetErasure {
  constructor(
    private readonly records: DatasetRecordsRepository,
    private readonly dataDir: string,
    private readonly lockTimeoutMs = ERASURE_LOCK_TIMEOUT_MS,
    /** When a rewritten file is recorded as written (recordRewritten): the command's clock. */
    private readonly clock: Pick<Clock, 'now'> = new Clock(),
  ) {}

  /**
   * Erases from every completed dataset of `source`, twice: once, then again for the tasks
   * completed meanwhile, by compiles that may have read the erased items before they were
   * deleted. `compiling`: the source's tasks still compiling between the passes, each of which
   * may have read the erased items before they were deleted, by this run or an earlier one: a
   * task reported then may complete right after (the report says to run again), and one
   * completed before it is in the second pass. Every one of them, not only those whose items
   * this run deleted: a second run found none left to delete, and said nothing of a compile the
   * first had named (the second review).
   */
  async eraseAll(source: Source, isErased: ErasedRow, dryRun: boolean): Promise<DatasetsErasure> {
    const datasets: DatasetErasureOutcome[] = [];
    await this.erasePass(source, isErased, dryRun, datasets);
    const compiling = await this.records.compilingTasks(source);
    await this.erasePass(source, isErased, dryRun, datasets);
    return { datasets, compiling };
  }

  /**
   * Takes the rows `isErased` names out of `task`'s dataset, or with `dryRun` only counts them.
   * A dataset without any is read, never written: its files keep their bytes and times.
   */
  eraseFrom(
    task: CompletedTask,
    isErased: ErasedRow,
    dryRun: boolean,
  ): Promise<DatasetErasureOutcome> {
    return this.erase(task, isErased, dryRun, true);
  }

  /** Erases from every completed dataset of `source` not in `done` yet. */
  private async erasePass(
    source: Source,
    isErased: ErasedRow,
    dryRun: boolean,
    done: DatasetErasureOutcome[],
  ): Promise<void> {
    const seen = new Set(done.map((dataset) => dataset.taskId));
    for (const task of await this.records.completedDatasets(source))
      if (!seen.has(task.id)) done.push(await this.eraseFrom(task, isErased, dryRun));
  }

  private async erase(
    task: CompletedTask,
    isErased: ErasedRow,
    dryRun: boolean,
    finishing: boolean,
  ): Promise<DatasetErasureOutcome> {
    const taskId = task.id;
    const path = datasetFileHere(this.dataDir, task.dataset_file);
    try {
      const state = await stateAt(path);
      const differs = await howFileDiffers(path, {
        bytes: Number(task.dataset_bytes),
        sha256: task.dataset_sha256,
      });
      if (differs !== undefined || state === undefined) {
        const earlier = finishing ? await this.earlierRewrite(task, path) : undefined;
        if (earlier !== undefined)
          return await this.finishEarlier(task, path, earlier, isErased, dryRun);
        return { taskId, outcome: 'not-checked', why: `its file ${differs ?? 'is missing'}` };
      }
      const found = await countRows(path, isErased);
      if (found.erased === 0) return { taskId, outcome: 'untouched' };
      const rows = found.rows - found.erased;
      if (dryRun) return { taskId, outcome: 'to-rewrite', removed: found.erased, rows };
      await writeJsonLines(path, keptRows(path, isErased), (rename, written) =>
        this.records.lockTask(taskId, this.lockTimeoutMs, async (lock) => {
          // Rewritten by another erasure since it was read: that one's file stays.
          if (
            lock.state !== 'completed' ||
            lock.datasetSha256 !== task.dataset_sha256 ||
            (await stateAt(path)) !== state
          )
            throw new RenameRefused('the dataset changed while it was rewritten');
          // Recorded first, committed with the rename below: a failure before the commit
          // leaves the record as it was, and the old file in place.
          if (
            !(await this.records.recordRewritten(
              taskId,
              task.dataset_sha256,
              written,
              this.clock.now(),
              lock,
            ))
          )
            throw new RenameRefused('the dataset changed while it was rewritten');
          // The manifest says when the dataset was compiled, as a conversion's rewrite does, and
          // which file the new one replaces: a commit lost after the rename below leaves the
          // new file and this manifest, and the next run finishes it (finishEarlier).
          await writeManifest(
            task,
            { ...written, parquet: null },
            task.completed_at ?? new Date(),
            undefined,
            task.dataset_sha256,
          );
          for (const parquet of this.parquetFilesOf(task, path)) await rm(parquet, { force: true });
          await rename();
        }),
      );
      return { taskId, outcome: 'rewritten', removed: found.erased, rows };
    } catch (error) {
      return { taskId, outcome: 'not-checked', why: whyNotChecked(error) };
    }
  }

  /**
   * The file at `path` as an earlier erasure's rewrite of `task`'s recorded one left it when its
   * commit was lost after the rename: its manifest names the task and the SHA-256 the task
   * records as the file it replaces, and the file has the manifest's size and SHA-256
   * (vouchedDataset). Undefined for anything else (a file edited or put there by hand).
   */
  private async earlierRewrite(
    task: CompletedTask,
    path: string,
  ): Promise<VouchedDataset | undefined> {
    const vouched = await vouchedDataset(task.id, path);
    return vouched?.replacesSha256 === task.dataset_sha256 ? vouched : undefined;
  }

  /**
   * Records the earlier rewrite's file (its size and SHA-256 as vouched for, its rows and first
   * and last times read from it) under the task row's lock, as long as the task still records
   * the file it replaced (recordRewritten), and removes any Parquet file left; then erases from
   * the task as recorded now. A dry run records nothing, and says what it would do.
   */
  private async finishEarlier(
    task: CompletedTask,
    path: string,
    earlier: VouchedDataset,
    isErased: ErasedRow,
    dryRun: boolean,
  ): Promise<DatasetErasureOutcome> {
    const taskId = task.id;
    const found = await countRows(path, isErased);
    if (dryRun) {
      const rows = found.rows - found.erased;
      return found.erased === 0
        ? { taskId, earlierRun: 'to-finish', outcome: 'untouched' }
        : { taskId, earlierRun: 'to-finish', outcome: 'to-rewrite', removed: found.erased, rows };
    }
    const file: JsonLinesFile = {
      file: path,
      bytes: earlier.bytes,
      sha256: earlier.sha256,
      rows: found.rows,
      start: found.start,
      end: found.end,
    };
    const recorded = await this.records.lockTask(taskId, this.lockTimeoutMs, async (lock) => {
      if (
        lock.state !== 'completed' ||
        lock.datasetSha256 !== task.dataset_sha256 ||
        (await stateAt(path)) !== earlier.identity ||
        !(await this.records.recordRewritten(
          taskId,
          task.dataset_sha256,
          file,
          this.clock.now(),
          lock,
        ))
      )
        return false;
      for (const parquet of this.parquetFilesOf(task, path)) await rm(parquet, { force: true });
      return true;
    });
    if (!recorded)
      return { taskId, outcome: 'not-checked', why: 'the dataset changed while it was checked' };
    const now = await this.records.completedDataset(taskId);
    if (now === undefined)
      return { taskId, outcome: 'not-checked', why: 'its task no longer records a dataset' };
    return { ...(await this.erase(now, isErased, false, false)), earlierRun: 'finished' };
  }

  /**
   * The Parquet files made from the dataset's rows: the one beside it, and the one the task
   * records (read under this DATA_DIR), when a release named it otherwise.
   */
  private parquetFilesOf(task: CompletedTask, path: string): string[] {
    const files = [parquetPathBeside(path)];
    if (task.parquet_file !== null) files.push(datasetFileHere(this.dataDir, task.parquet_file));
    return [...new Set(files)];
  }
}

/** Why a dataset was not checked, from what stopped it. */
function whyNotChecked(error: unknown): string {
  if (error instanceof RenameRefused) return error.message;
  // lock_not_available: the lock_timeout ran out behind a compile or a conversion.
  if (isLockTimeout(error))
    return 'its task was busy (its row stayed locked by a compile or a Parquet conversion): run the command again';
  return `it failed (${failureOf(error)})`;
}

/**
 * What a failure to read or write a dataset is called in the erasure's output: its code, never
 * its message when it has none, which may quote the line it failed on (JSON.parse's does), a
 * post of the author among them. Not errorCode (common/files), which falls back to the message.
 */
export function failureOf(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string') return code;
  return error instanceof SyntaxError ? 'a line is not JSON' : (error as Error).name;
}

/**
 * How many rows a JSON lines dataset file holds, how many of them `isErased` names, and the
 * first and last rows' `datetime` (null: no rows), as writeJsonLines records them.
 */
export type RowCount = { rows: number; erased: number; start: Date | null; end: Date | null };

export async function countRows(path: string, isErased: ErasedRow): Promise<RowCount> {
  const count: RowCount = { rows: 0, erased: 0, start: null, end: null };
  for await (const line of datasetLines(path)) {
    const item = JSON.parse(line) as { datetime?: unknown };
    count.rows++;
    if (isErased(item)) count.erased++;
    const datetime = typeof item.datetime === 'string' ? new Date(item.datetime) : null;
    count.start ??= datetime;
    count.end = datetime;
  }
  return count;
}

/**
 * The rows of a JSON lines dataset file but those `isErased` names, in their order, each as it
 * was: parsed and written again by JSON.stringify (writeJsonLines), a line made by it comes out
 * the same.
 */
async function* keptRows(path: string, isErased: ErasedRow): AsyncGenerator<DatasetRow> {
  for await (const line of datasetLines(path)) {
    const item = JSON.parse(line) as { uri: string; datetime: string };
    if (isErased(item)) continue;
    yield { uri: item.uri, datetime: new Date(item.datetime), item };
  }
}

import { rm, stat } from 'node:fs/promises';
import { RenameRefused } from './atomic-file';
import { parquetPathBeside } from './dataset-parquet';
import { datasetFileHere } from './dataset-path';
import { DatasetRecordsRepository } from './dataset-records.repository';
import { datasetLines } from './dataset-lines';
import { DatasetRow, howFileDiffers, writeJsonLines, writeManifest } from './dataset-writer';
import { CompletedTask } from './task.types';
import { TaskLifecycleRepository } from './task-lifecycle.repository';
import { fileStateOf } from './verified-files';

/** Whether a dataset's row (an item, parsed from its line) is one to take out. */
export type ErasedRow = (item: unknown) => boolean;

/** What an erasure did, or would do (a dry run), to one completed task's dataset. */
export type DatasetErasureOutcome = { taskId: string } &
  /** None of its rows is erased: its files are left as they are. */
  (
    | { outcome: 'untouched' }
    /** `removed` rows taken out (or to be, in a dry run), `rows` left. */
    | { outcome: 'rewritten' | 'to-rewrite'; removed: number; rows: number }
    /**
     * Not read: its file is not the one the task records (`why`), so it is not served either; or
     * it changed while it was rewritten (another erasure), or could not be read or written.
     */
    | { outcome: 'not-checked'; why: string }
  );

/**
 * Takes rows out of completed tasks' datasets: the JSON lines file written again without them,
 * the Parquet file made from the old rows removed (the next Parquet download makes it again),
 * the manifest rewritten, and the task's record of the file (size, SHA-256, rows) changed in
 * the transaction that renames the new file into place, under the task row's lock, as a
 * compile records its dataset. A download that opened the old file before the rename sends the
 * old bytes under the old hash, or fails as a changed file (recordedBytes); one of the old
 * record and the new file (a replica reading the row just before the commit) finds another
 * size or other bytes than the hash names, and answers 503 as for a missing file. Only ever
 * the recorded file is rewritten: one that is not as recorded is left for the operator.
 */
export class DatasetErasure {
  constructor(
    private readonly tasks: TaskLifecycleRepository,
    private readonly records: DatasetRecordsRepository,
    private readonly dataDir: string,
  ) {}

  /**
   * Takes the rows `isErased` names out of `task`'s dataset, or with `dryRun` only counts them.
   * A dataset without any is read, never written: its files keep their bytes and times.
   */
  async eraseFrom(
    task: CompletedTask,
    isErased: ErasedRow,
    dryRun: boolean,
  ): Promise<DatasetErasureOutcome> {
    const taskId = task.id;
    const path = datasetFileHere(this.dataDir, task.dataset_file);
    try {
      const state = await stateOf(path);
      const differs = await howFileDiffers(path, {
        bytes: Number(task.dataset_bytes),
        sha256: task.dataset_sha256,
      });
      if (differs !== undefined || state === undefined)
        return { taskId, outcome: 'not-checked', why: `its file ${differs ?? 'is missing'}` };
      const found = await countRows(path, isErased);
      if (found.erased === 0) return { taskId, outcome: 'untouched' };
      const rows = found.rows - found.erased;
      if (dryRun) return { taskId, outcome: 'to-rewrite', removed: found.erased, rows };
      await writeJsonLines(path, keptRows(path, isErased), (rename, written) =>
        this.tasks.lockTask(taskId, async (lock) => {
          // Rewritten by another erasure since it was read: that one's file stays.
          if (
            lock.state !== 'completed' ||
            lock.datasetSha256 !== task.dataset_sha256 ||
            (await stateOf(path)) !== state
          )
            throw new RenameRefused('the dataset changed while it was rewritten');
          // Recorded first, committed with the rename below: a failure before the commit
          // leaves the record as it was, and the old file in place.
          if (!(await this.records.recordRewritten(taskId, task.dataset_sha256, written, lock)))
            throw new RenameRefused('the dataset changed while it was rewritten');
          // The manifest says when the dataset was compiled, as a conversion's rewrite does.
          await writeManifest(task, { ...written, parquet: null }, task.completed_at ?? new Date());
          for (const parquet of this.parquetFilesOf(task, path)) await rm(parquet, { force: true });
          await rename();
        }),
      );
      return { taskId, outcome: 'rewritten', removed: found.erased, rows };
    } catch (error) {
      const why =
        error instanceof RenameRefused ? error.message : `it failed (${failureOf(error)})`;
      return { taskId, outcome: 'not-checked', why };
    }
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

/**
 * What a failure to read or write a dataset is called in the erasure's output: its code, never
 * its message when it has none, which may quote the line it failed on (JSON.parse's does), a
 * post of the author among them.
 */
export function failureOf(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string') return code;
  return error instanceof SyntaxError ? 'a line is not JSON' : (error as Error).name;
}

/** The file's state (fileStateOf), or undefined when there is none. */
function stateOf(path: string): Promise<string | undefined> {
  return stat(path).then(fileStateOf, () => undefined);
}

/** How many rows a JSON lines dataset file holds, and how many of them `isErased` names. */
export async function countRows(
  path: string,
  isErased: ErasedRow,
): Promise<{ rows: number; erased: number }> {
  let rows = 0;
  let erased = 0;
  for await (const line of datasetLines(path)) {
    rows++;
    if (isErased(JSON.parse(line))) erased++;
  }
  return { rows, erased };
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

import { Writable } from 'node:stream';
import { Source } from '../../common/source';
import { toSourceName } from '../../network/sources';
import { RenameWith, writeFileAtomically, WrittenFile } from './atomic-file';
import { convertInWorker } from './parquet-conversion';
import { TaskRow } from './task.types';

export { ROW_GROUP_CHARS } from './parquet-encoder';

/**
 * Writes the rows of a task's JSON lines dataset (`jsonlPath`, as compiled) to `path` as
 * Parquet (the columns: parquet-encoder.ts), in the same order, through `writeFileAtomically`,
 * with `metadata` as the file's key-value metadata. Built from the JSON lines file, not the
 * stored items, so both files hold the same rows by construction, and a task compiled before
 * Parquet existed gets its file from what it published. The writer is deterministic: two
 * replicas converting the same file write the same bytes. The rows are encoded in a worker
 * thread (convertInWorker); the file, its hash and its rename stay here. Once `stopping` says so
 * (a compile's, or the service's, at shutdown), the write is given up (WriteStopped) and the
 * worker terminated. `renameWith` runs the rename into place, or refuses it (writeFileAtomically).
 */
export async function writeParquet(
  platform: Source,
  jsonlPath: string,
  path: string,
  metadata: Readonly<Record<string, string>> = {},
  {
    stopping = () => false,
    renameWith,
  }: { stopping?: () => boolean; renameWith?: RenameWith } = {},
): Promise<WrittenFile & { rows: number }> {
  let rows = 0;
  const job = { platform, jsonlPath, metadata };
  const fill = async (output: Writable) => {
    rows = await convertInWorker(job, output, stopping);
  };
  const written = await writeFileAtomically(path, fill, { renameWith });
  return { ...written, rows };
}

/**
 * Version of the gateway's Parquet writer, recorded with each file and written into it
 * (`dataset_format_version`): raised whenever files already written should be written again (the
 * columns, their statistics or the metadata change). A recorded file of another version is
 * written again at its next download.
 */
export const PARQUET_VERSION = 1;

/**
 * A task's Parquet key-value metadata: where the rows come from, for a file found on its own
 * (DuckDB: `SELECT * FROM parquet_kv_metadata('tao-x.parquet')`). Only what the task fixes, so
 * the file's bytes stay the same when it is written again. Absent values are left out.
 */
export function parquetMetadata(
  task: Pick<
    TaskRow,
    'id' | 'platform' | 'label' | 'keyword' | 'post_start' | 'post_end' | 'registered_by'
  >,
  jsonlSha256: string,
): Record<string, string> {
  const entries: [string, string | null | undefined][] = [
    ['task_id', task.id],
    ['source', toSourceName(task.platform)],
    ['label', task.label],
    ['keyword', task.keyword],
    ['post_start_datetime', task.post_start?.toISOString()],
    ['post_end_datetime', task.post_end?.toISOString()],
    ['registered_by', task.registered_by],
    ['jsonl_sha256', jsonlSha256],
    ['dataset_format_version', String(PARQUET_VERSION)],
  ];
  return Object.fromEntries(
    entries.filter((entry): entry is [string, string] => typeof entry[1] === 'string'),
  );
}

/** Whether the task records a Parquet file this release's writer made. */
export function hasCurrentParquet(
  task: TaskRow,
): task is TaskRow & { parquet_file: string; parquet_sha256: string } {
  return (
    task.parquet_file !== null &&
    task.parquet_sha256 !== null &&
    task.parquet_version === PARQUET_VERSION
  );
}

/** Where a dataset's Parquet file lives: beside its JSON lines file. */
export function parquetPathBeside(jsonlPath: string): string {
  return `${jsonlPath.replace(/\.jsonl\.gz$/, '')}.parquet`;
}

import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { basename } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';
import { jsonLine } from '../../common/text-lines';
import { RenameWith, writeFileAtomically, WrittenFile } from './atomic-file';
import { finalGap } from './collection-paging';

export interface DatasetRow {
  uri: string;
  datetime: Date;
  item: unknown;
}

/** The JSON lines file as compiled: what the task records of it. */
export interface JsonLinesFile extends WrittenFile {
  file: string;
  rows: number;
  start: Date | null;
  end: Date | null;
}

export interface ParquetFile extends WrittenFile {
  file: string;
}

/** A Parquet file as a completed task records it, with when it was written (null: unknown). */
export interface RecordedParquetFile extends ParquetFile {
  writtenAt: Date | null;
}

/** A completed task's dataset files, as the task records them. */
export interface CompiledDataset extends JsonLinesFile {
  parquet: ParquetFile | null;
}

export interface DatasetManifest {
  task_id: string;
  format: 'jsonl.gz';
  rows: number;
  bytes: number;
  sha256: string;
  data_start: string | null;
  data_end: string | null;
  /**
   * The posting times the final collection did not reach (both ends inclusive, start null from a
   * window's open start), null when it reached them all: the task's `dataset.gap`, the same
   * finalGap of the same row (docs/decisions.md, "Scraping task lifecycle").
   */
  gap: DatasetGap | null;
  created_at: string;
  /**
   * The same rows as Parquet; null while it has not been written (docs/decisions.md, "Parquet
   * too").
   */
  parquet: { file: string; bytes: number; sha256: string } | null;
  /**
   * Written by an author's erasure only: the SHA-256 of the file this one replaces, the one its
   * task recorded. A run whose commit was lost after its rename leaves this manifest beside the
   * new file and the old record; the next run finds the record it names and finishes it
   * (DatasetErasure). Absent from a compile's or a conversion's manifest.
   */
  replaces_sha256?: string;
}

/**
 * Writes a task's items as gzip-compressed JSON lines (one item per line, in the order given:
 * oldest first). The file is written as `<path>.<uuid>.partial` and renamed once complete: a
 * crash mid-compile leaves no file that looks complete, and compiling again starts over. The
 * name is unique to this writer because the job lock is a session advisory lock: when its
 * connection drops mid-compile, another replica may compile the same task at once, and a shared
 * partial file would interleave both writers' bytes under a hash neither recorded.
 * `renameWith` runs the rename once the file is written, or refuses it (writeFileAtomically),
 * told the file as a task would record it.
 */
export async function writeJsonLines(
  path: string,
  rows: AsyncIterable<DatasetRow>,
  renameWith?: RenameWith<JsonLinesFile>,
): Promise<JsonLinesFile> {
  let count = 0;
  let start: Date | null = null;
  let end: Date | null = null;
  async function* lines(): AsyncGenerator<string> {
    for await (const row of rows) {
      count++;
      start ??= row.datetime;
      end = row.datetime;
      yield jsonLine(row.item);
    }
  }
  const described = (written: WrittenFile): JsonLinesFile => ({
    ...written,
    file: path,
    rows: count,
    start,
    end,
  });
  const written = await writeFileAtomically(
    path,
    (output) => pipeline(Readable.from(lines()), createGzip(), output),
    { renameWith: renameWith && ((rename, file) => renameWith(rename, described(file))) },
  );
  return described(written);
}

/** Where the manifest of the JSON lines file `file` lives: beside it. */
export function manifestPathOf(file: string): string {
  return `${file}.manifest.json`;
}

/** A dataset's gap as the manifest and the API say it (TaskDatasetGapDto): ISO date-times. */
export interface DatasetGap {
  start: string | null;
  end: string;
}

/** What the manifest reads of its task: its id, and what finalGap reads for its gap. */
export type ManifestTask = { id: string } & Parameters<typeof finalGap>[0];

/** finalGap as the manifest and the API (`dataset.gap`) say it: one reading for both. */
export function datasetGapOf(task: Parameters<typeof finalGap>[0]): DatasetGap | null {
  const gap = finalGap(task);
  return gap && { start: gap.start?.toISOString() ?? null, end: gap.end.toISOString() };
}

/** The manifest beside the JSON lines file `file`, as far as it is one; undefined: none, no JSON. */
export async function readManifest(file: string): Promise<Partial<DatasetManifest> | undefined> {
  try {
    const manifest: unknown = JSON.parse(await readFile(manifestPathOf(file), 'utf8'));
    return typeof manifest === 'object' && manifest !== null ? manifest : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The manifest beside the JSON lines file (`<file>.manifest.json`), rewritten whole each time;
 * `renameWith` runs the rename once it is written, or refuses it (writeFileAtomically).
 * `replacesSha256`: the recorded file an erasure's rewrite replaces (DatasetManifest).
 */
export async function writeManifest(
  task: ManifestTask,
  dataset: CompiledDataset,
  createdAt: Date,
  renameWith?: RenameWith,
  replacesSha256?: string,
): Promise<DatasetManifest> {
  const manifest: DatasetManifest = {
    task_id: task.id,
    format: 'jsonl.gz',
    rows: dataset.rows,
    bytes: dataset.bytes,
    sha256: dataset.sha256,
    data_start: dataset.start?.toISOString() ?? null,
    data_end: dataset.end?.toISOString() ?? null,
    gap: datasetGapOf(task),
    created_at: createdAt.toISOString(),
    parquet: dataset.parquet && {
      file: basename(dataset.parquet.file),
      bytes: dataset.parquet.bytes,
      sha256: dataset.parquet.sha256,
    },
    ...(replacesSha256 === undefined ? {} : { replaces_sha256: replacesSha256 }),
  };
  const text = `${JSON.stringify(manifest, null, 2)}\n`;
  await writeFileAtomically(
    manifestPathOf(dataset.file),
    (output) => pipeline(Readable.from([text]), output),
    { renameWith },
  );
  return manifest;
}

/**
 * A dataset file's size on disk; undefined when it is not there. A file whose size is not the
 * one its task records (cut short by a full disk or a copy broken off, replaced) is not the file
 * the recorded SHA-256 names, and is treated as missing: docs/decisions.md, "Scraping task
 * lifecycle" (bytes changed in place are found as a download sends them: recordedBytes).
 */
export function sizeOnDisk(file: string): Promise<number | undefined> {
  return stat(file).then(
    (info) => info.size,
    () => undefined,
  );
}

/**
 * The SHA-256 of a dataset file's bytes as they are on disk now, read through; undefined when
 * it cannot be read. Read once before a step nothing undoes (deleting the stored items the file
 * was made from), where its size alone would let a file changed in place pass.
 */
export async function sha256OnDisk(file: string): Promise<string | undefined> {
  const hash = createHash('sha256');
  try {
    await pipeline(createReadStream(file), hash);
  } catch {
    return undefined;
  }
  return hash.digest('hex');
}

/**
 * How the file on disk differs from the one recorded (its size and SHA-256), or undefined when
 * it is that file: read through, for a step nothing undoes (deleting the items it was made from,
 * setting aside a dataset no task records).
 */
export async function howFileDiffers(
  file: string,
  recorded: { bytes: number; sha256: string | null },
): Promise<string | undefined> {
  const size = await sizeOnDisk(file);
  if (size === undefined) return 'is missing';
  if (size !== recorded.bytes) return `has ${size} bytes, not the ${recorded.bytes} recorded`;
  const sha256 = await sha256OnDisk(file);
  if (sha256 === undefined) return 'cannot be read';
  if (sha256 !== recorded.sha256) return 'holds other bytes than the SHA-256 recorded names';
  return undefined;
}

import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, open, rename, rm, stat, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';

export interface DatasetRow {
  uri: string;
  datetime: Date;
  item: unknown;
}

export interface DatasetManifest {
  task_id: string;
  format: 'jsonl.gz';
  rows: number;
  bytes: number;
  sha256: string;
  data_start: string | null;
  data_end: string | null;
  created_at: string;
}

/**
 * Writes a task's items as gzip-compressed JSON lines (one item per line, oldest first) and a
 * manifest beside it. The file is written as `<path>.partial`, flushed to disk and only then
 * renamed: a crash mid-compile leaves no file that looks complete, and compiling again simply
 * starts over.
 */
export async function writeDataset(
  taskId: string,
  path: string,
  rows: AsyncIterable<DatasetRow>,
  now: Date,
): Promise<DatasetManifest> {
  await mkdir(dirname(path), { recursive: true });
  const partial = `${path}.partial`;
  const hash = createHash('sha256');
  let count = 0;
  let start: Date | null = null;
  let end: Date | null = null;
  async function* lines(): AsyncGenerator<string> {
    for await (const row of rows) {
      count++;
      start ??= row.datetime;
      end = row.datetime;
      yield `${JSON.stringify(row.item)}\n`;
    }
  }
  const hashing = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      hash.update(chunk);
      callback(null, chunk);
    },
  });
  try {
    await pipeline(Readable.from(lines()), createGzip(), hashing, createWriteStream(partial));
    const handle = await open(partial, 'r+');
    await handle.sync();
    await handle.close();
    await rename(partial, path);
  } catch (error) {
    await rm(partial, { force: true });
    throw error;
  }
  const manifest: DatasetManifest = {
    task_id: taskId,
    format: 'jsonl.gz',
    rows: count,
    bytes: (await stat(path)).size,
    sha256: hash.digest('hex'),
    data_start: (start as Date | null)?.toISOString() ?? null,
    data_end: (end as Date | null)?.toISOString() ?? null,
    created_at: now.toISOString(),
  };
  await writeFile(`${path}.manifest.json`, `${JSON.stringify(manifest, null, 2)}\n`);
  return manifest;
}

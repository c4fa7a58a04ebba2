import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { gunzipSync } from 'node:zlib';
import {
  CompiledDataset,
  DatasetRow,
  readManifest,
  writeJsonLines,
  writeManifest,
} from './dataset-writer';

/** `count` rows of one writer, each after a pause, so that two writers interleave. */
async function* slowRows(writer: string, count: number): AsyncGenerator<DatasetRow> {
  for (let n = 0; n < count; n++) {
    await sleep(2);
    const datetime = new Date(Date.UTC(2026, 0, 1, 0, n));
    yield { uri: `${writer}-${n}`, datetime, item: { writer, n, padding: 'x'.repeat(2000) } };
  }
}

describe(writeJsonLines.name, () => {
  let directory: string;
  beforeEach(() => (directory = mkdtempSync(join(tmpdir(), 'dataset-writer-'))));
  afterEach(() => rmSync(directory, { recursive: true, force: true }));

  it('lets two compiles of one task (two replicas) finish with a whole file whose hash it recorded', async () => {
    const path = join(directory, 'task.jsonl.gz');
    const written = await Promise.all([
      writeJsonLines(path, slowRows('a', 40)),
      writeJsonLines(path, slowRows('b', 40)),
    ]);
    const bytes = readFileSync(path);
    const sha256 = createHash('sha256').update(bytes).digest('hex');
    expect(written.map((file) => file.sha256)).toContain(sha256);
    const writers = gunzipSync(bytes)
      .toString()
      .trim()
      .split('\n')
      .map((line) => (JSON.parse(line) as { writer: string }).writer);
    expect(writers).toHaveLength(40);
    expect(new Set(writers).size).toBe(1);
    expect(readdirSync(directory)).toEqual(['task.jsonl.gz']);
  });

  it('writes one item per line for readers that end lines at U+2028 too, the values unchanged', async () => {
    const path = join(directory, 'task.jsonl.gz');
    const items = [
      { text: 'one\u2028two\u2029three\u0085four', n: 0 },
      { text: 'line\nbreak\r\n', n: 1 },
    ];
    async function* rows(): AsyncGenerator<DatasetRow> {
      for (const [n, item] of items.entries())
        yield { uri: `u${n}`, datetime: new Date(Date.UTC(2026, 0, 1, 0, n)), item };
    }
    await writeJsonLines(path, rows());
    const text = gunzipSync(readFileSync(path)).toString();
    // Python's str.splitlines and Node 24's readline break at each of these.
    const lines = text.split(/\r\n|[\n\r\v\f\x1c-\x1e\x85\u2028\u2029]/).filter(Boolean);
    expect(lines.map((line) => JSON.parse(line) as unknown)).toEqual(items);
  });

  it('records the rows, the first and last datetimes, and the size and hash of the very file written', async () => {
    const path = join(directory, 'task.jsonl.gz');
    const times = [Date.UTC(2026, 0, 1, 0, 0), Date.UTC(2026, 0, 1, 0, 5), Date.UTC(2026, 0, 3)];
    async function* rows(): AsyncGenerator<DatasetRow> {
      for (const [n, time] of times.entries())
        yield { uri: `u${n}`, datetime: new Date(time), item: { n } };
    }
    const written = await writeJsonLines(path, rows());
    const bytes = readFileSync(path);
    expect(written).toEqual({
      file: path,
      rows: 3,
      start: new Date(times[0]),
      end: new Date(times[2]),
      bytes: bytes.length,
      sha256: createHash('sha256').update(bytes).digest('hex'),
    });
  });

  it('writes a task that collected nothing as an empty file with no data range', async () => {
    const path = join(directory, 'task.jsonl.gz');
    async function* none(): AsyncGenerator<DatasetRow> {}
    const written = await writeJsonLines(path, none());
    expect(written).toMatchObject({ rows: 0, start: null, end: null });
    expect(gunzipSync(readFileSync(path)).toString()).toBe('');
  });
});

describe(writeManifest.name, () => {
  let directory: string;
  beforeEach(() => (directory = mkdtempSync(join(tmpdir(), 'dataset-manifest-'))));
  afterEach(() => rmSync(directory, { recursive: true, force: true }));

  /** A task whose final collection reached its expiry (its gap null). */
  const task = {
    id: 'task',
    post_start: null,
    post_end: null,
    expires_at: new Date('2026-01-08T00:00:00.000Z'),
    last_collected_at: new Date('2026-01-08T00:00:00.500Z'),
    collect_head: new Date('2026-01-08T00:00:00.000Z'),
    collect_cursor: null,
    collect_floor: null,
    collect_back_next: false,
  };

  const dataset: CompiledDataset = {
    file: '',
    rows: 3,
    bytes: 1234,
    sha256: 'a'.repeat(64),
    start: new Date('2026-01-01T00:00:00.000Z'),
    end: new Date('2026-01-03T12:30:00.000Z'),
    parquet: null,
  };

  // A pipeline checks the files it fetched against it, and finds the Parquet file beside it.
  it('lists the file as compiled and the Parquet file by its name alone, on disk as returned', async () => {
    const file = join(directory, 'task.jsonl.gz');
    const parquet = { file: join(directory, 'task.parquet'), bytes: 987, sha256: 'b'.repeat(64) };
    const manifest = await writeManifest(
      task,
      { ...dataset, file, parquet },
      new Date('2026-01-08T00:00:01.000Z'),
    );
    const expected = {
      task_id: 'task',
      format: 'jsonl.gz',
      rows: 3,
      bytes: 1234,
      sha256: 'a'.repeat(64),
      data_start: '2026-01-01T00:00:00.000Z',
      data_end: '2026-01-03T12:30:00.000Z',
      gap: null,
      created_at: '2026-01-08T00:00:01.000Z',
      parquet: { file: 'task.parquet', bytes: 987, sha256: 'b'.repeat(64) },
    };
    expect(manifest).toEqual(expected);
    expect(JSON.parse(readFileSync(`${file}.manifest.json`, 'utf8'))).toEqual(expected);
    expect(readdirSync(directory)).toEqual(['task.jsonl.gz.manifest.json']);
  });

  it('lists no data range for an empty dataset and no Parquet file before one is written', async () => {
    const file = join(directory, 'task.jsonl.gz');
    const manifest = await writeManifest(
      task,
      { ...dataset, file, rows: 0, start: null, end: null },
      new Date('2026-01-08T00:00:01.000Z'),
    );
    expect(manifest).toMatchObject({ rows: 0, data_start: null, data_end: null, parquet: null });
  });

  // The task's `dataset.gap` (finalGap): a file copied out of the datasets directory says too what
  // its final collection did not reach (docs/decisions.md, "Scraping task lifecycle").
  it('says what the final collection did not reach, as the task shows it', async () => {
    const file = join(directory, 'task.jsonl.gz');
    const failedFinal = { ...task, last_collected_at: new Date('2026-01-07T23:00:00.000Z') };
    failedFinal.collect_head = new Date('2026-01-07T23:00:00.000Z');
    const manifest = await writeManifest(
      failedFinal,
      { ...dataset, file },
      new Date('2026-01-08T01:00:00.000Z'),
    );
    const gap = { start: '2026-01-07T23:00:00.000Z', end: '2026-01-08T00:00:00.000Z' };
    expect(manifest.gap).toEqual(gap);
    expect(JSON.parse(readFileSync(`${file}.manifest.json`, 'utf8'))).toMatchObject({ gap });
  });

  // An erasure's rewrite names the file it replaces: the next run finishes one whose commit was
  // lost (DatasetErasure). A compile's manifest has no such field.
  it("names the file an erasure's rewrite replaces, read back by readManifest", async () => {
    const file = join(directory, 'task.jsonl.gz');
    const replaced = 'c'.repeat(64);
    const manifest = await writeManifest(
      task,
      { ...dataset, file },
      new Date('2026-01-08T00:00:01.000Z'),
      undefined,
      replaced,
    );
    expect(manifest.replaces_sha256).toBe(replaced);
    expect(await readManifest(file)).toEqual(manifest);
    expect(await readManifest(join(directory, 'other.jsonl.gz'))).toBeUndefined();
    writeFileSync(`${file}.manifest.json`, 'not JSON');
    expect(await readManifest(file)).toBeUndefined();
  });
});

import { mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { countRows, DatasetErasure, failureOf } from './dataset-erasure';
import { DatasetRecordsRepository } from './dataset-records.repository';
import { writeJsonLines } from './dataset-writer';
import { CompletedTask } from './task.types';

describe(DatasetErasure.name, () => {
  let directory: string;
  beforeEach(() => (directory = mkdtempSync(join(tmpdir(), 'dataset-erasure-'))));
  afterEach(() => rmSync(directory, { recursive: true, force: true }));

  const rows = ['dave', 'erin', 'dave'].map((username, n) => {
    const datetime = new Date(Date.UTC(2026, 0, 1, n));
    return { uri: `u${n}`, datetime, item: { uri: `u${n}`, username, datetime } };
  });
  const isErin = (item: unknown) => (item as { username: string }).username === 'erin';

  /** A completed task `id` whose dataset holds `rows`, written in the data directory. */
  async function completedTask(id: string) {
    mkdirSync(join(directory, 'datasets'));
    const path = join(directory, 'datasets', `${id}.jsonl.gz`);
    async function* all() {
      yield* rows;
    }
    const written = await writeJsonLines(path, all());
    const task = {
      id,
      dataset_file: `${id}.jsonl.gz`,
      dataset_bytes: String(written.bytes),
      dataset_sha256: written.sha256,
      parquet_file: null,
    } as unknown as CompletedTask;
    return { path, written, task };
  }

  // A rewrite whose commit was lost is recorded from the file alone: its rows and times too.
  it('counts the rows, those erased, and the first and last times as writeJsonLines records them', async () => {
    const path = join(directory, 'task.jsonl.gz');
    async function* all() {
      yield* rows;
    }
    const written = await writeJsonLines(path, all());
    expect(await countRows(path, isErin)).toEqual({
      rows: 3,
      erased: 1,
      start: written.start,
      end: written.end,
    });
  });

  // The lock_timeout ran out (lock_not_available): the run goes on, the dataset is to do again.
  it('reports a dataset whose task row stayed locked as busy, to run again', async () => {
    const { task } = await completedTask('busy');
    const records = {
      lockTask: () => Promise.reject(Object.assign(new Error('lock timeout'), { code: '55P03' })),
    } as unknown as DatasetRecordsRepository;
    const erasure = new DatasetErasure(records, directory);
    expect(await erasure.eraseFrom(task, isErin, false)).toEqual({
      taskId: 'busy',
      outcome: 'not-checked',
      why: 'its task was busy (its row stayed locked by a compile or a Parquet conversion): run the command again',
    });
  });

  // Another erasure (or a recompile) rewrote the dataset between this one's read and its lock:
  // renamed over it, this run's file would replace rows it never read under a record of the
  // other's, and the dataset would no longer match its SHA-256 (a download's 503).
  it.each([
    ['the lock finds another file recorded', { datasetSha256: 'another' }, true],
    ['the lock finds the task no longer completed', { state: 'compiling' }, true],
    ['the record names another file when it is written', {}, false],
  ])('leaves the dataset as it is when %s', async (_case, found, recordable) => {
    const { path, written, task } = await completedTask('raced');
    const recordRewritten = jest.fn(() => Promise.resolve(recordable));
    const records = {
      lockTask: (_id: string, _timeout: number, work: (lock: unknown) => Promise<unknown>) =>
        work({ state: 'completed', datasetSha256: written.sha256, manager: {}, ...found }),
      recordRewritten,
    } as unknown as DatasetRecordsRepository;
    const erasure = new DatasetErasure(records, directory);
    expect(await erasure.eraseFrom(task, isErin, false)).toEqual({
      taskId: 'raced',
      outcome: 'not-checked',
      why: 'the dataset changed while it was rewritten',
    });
    expect(recordRewritten).toHaveBeenCalledTimes(recordable ? 0 : 1);
    expect(await countRows(path, isErin)).toMatchObject({ rows: 3, erased: 1 });
    expect(readdirSync(join(directory, 'datasets'))).toEqual(['raced.jsonl.gz']);
  });

  // JSON.parse's message quotes the line it failed on: a post, never printed.
  it('names a failure by its code, never by a message that may quote a post', () => {
    expect(failureOf(Object.assign(new Error('x'), { code: 'ENOSPC' }))).toBe('ENOSPC');
    expect(failureOf(new SyntaxError('Unexpected token in {"body":"SECRET"}'))).toBe(
      'a line is not JSON',
    );
  });
});

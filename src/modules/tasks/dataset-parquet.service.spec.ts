import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { Logger } from '@nestjs/common';
import { redditComment } from '../../../test/support/items';
import { Clock } from '../../common/clock/clock';
import { isDatabaseUnavailable } from '../../common/database-unavailable';
import * as datasetParquet from './dataset-parquet';
import {
  DatasetParquetService,
  PARQUET_CONVERSION_QUEUE,
  PARQUET_CONVERSIONS,
  PARQUET_RETRY_MS,
  ParquetBusyError,
} from './dataset-parquet.service';
import { manifestPathOf, writeJsonLines } from './dataset-writer';
import { CompletedTask } from './task.types';
import { TaskLifecycleRepository } from './task-lifecycle.repository';
import { TaskLock } from './task-row-lock';
import { testConfig } from '../../../test/support/test-config';
import { until } from '../../../test/support/until';

// A plain copy of the module, whose exports a test can spy on: the transform's CommonJS
// exports are read-only getters (docs/decisions.md, "Test tiers").
jest.mock('./dataset-parquet', () => ({
  __esModule: true,
  ...jest.requireActual<object>('./dataset-parquet'),
}));

const EXPIRED_AT = new Date('2026-01-08T00:00:00.000Z');
const COMPLETED_AT = new Date('2026-01-08T00:00:05.000Z');

const COMMENT = redditComment();

describe(DatasetParquetService.name, () => {
  let dataDir: string;
  /** DATA_DIR/datasets, where the service reads and writes a task's files. */
  let directory: string;
  let now: Date;
  let service: DatasetParquetService;
  let recorded: jest.Mock;
  /** The SHA-256 of the JSON lines file each task records, as its row's lock reads it. */
  let recordedShas: Map<string, string>;
  /** What the service tells the operator. */
  let logged: Record<'log' | 'error', jest.SpyInstance>;

  beforeEach(() => {
    logged = {
      log: jest.spyOn(Logger.prototype, 'log').mockImplementation(() => undefined),
      error: jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined),
    };
    dataDir = mkdtempSync(join(tmpdir(), 'dataset-parquet-service-'));
    directory = join(dataDir, 'datasets');
    mkdirSync(directory);
    now = new Date('2026-01-09T00:00:00.000Z');
    // What the repository answers: when the task says the file was written.
    recorded = jest.fn((_id: string, _file: unknown, at: Date) => Promise.resolve(at));
    // The task row's lock, as a completed task's finds it (test/medium/task-compile-race takes it):
    // with the JSON lines file the task records (an erasure may change it).
    recordedShas = new Map();
    const lockTask = (id: string, work: (lock: TaskLock) => Promise<unknown>) =>
      work({ state: 'completed', datasetSha256: recordedShas.get(id) ?? null } as TaskLock);
    service = new DatasetParquetService(
      { recordParquet: recorded, lockTask } as unknown as TaskLifecycleRepository,
      { now: () => now } as Clock,
      testConfig({ dataDir }),
    );
  });
  afterEach(() => {
    jest.restoreAllMocks();
    rmSync(dataDir, { recursive: true, force: true });
  });

  /** A task completed with one comment in its JSON lines file and no Parquet file yet. */
  async function completedTask(id: string): Promise<CompletedTask> {
    async function* rows() {
      yield { uri: COMMENT.uri, datetime: new Date(COMMENT.datetime), item: COMMENT };
    }
    const jsonl = await writeJsonLines(join(directory, `${id}.jsonl.gz`), rows());
    recordedShas.set(id, jsonl.sha256);
    return {
      id,
      platform: 'reddit',
      label: 'r/bitcoin',
      keyword: null,
      post_start: null,
      post_end: null,
      registered_by: '5Hotkey',
      state: 'completed',
      expires_at: EXPIRED_AT,
      // Its final collection reached its expiry: no gap.
      last_collected_at: new Date(EXPIRED_AT.getTime() + 1000),
      collect_head: EXPIRED_AT,
      collect_cursor: null,
      collect_floor: null,
      collect_back_next: false,
      completed_at: COMPLETED_AT,
      dataset_file: jsonl.file,
      dataset_rows: jsonl.rows,
      dataset_bytes: String(jsonl.bytes),
      dataset_sha256: jsonl.sha256,
      data_start: jsonl.start,
      data_end: jsonl.end,
      parquet_file: null,
      parquet_bytes: null,
      parquet_sha256: null,
      parquet_version: null,
      parquet_written_at: null,
    } as CompletedTask;
  }

  /** Makes the task's JSON lines file unreadable as items until the returned function runs. */
  function breakFile(task: CompletedTask): () => void {
    const bytes = readFileSync(task.dataset_file);
    writeFileSync(task.dataset_file, gzipSync('not a JSON line\n'));
    return () => writeFileSync(task.dataset_file, bytes);
  }

  it("writes a missing Parquet file at a download, and lists it in the manifest dated at the task's completion", async () => {
    const task = await completedTask('sub');

    const parquet = await service.ensure(task);

    expect(parquet).toEqual({
      file: join(directory, 'sub.parquet'),
      bytes: expect.any(Number),
      sha256: expect.stringMatching(/^[0-9a-f]{64}$/),
      // Written now (its Last-Modified), as the task records it.
      writtenAt: now,
    });
    const { writtenAt: _, ...file } = parquet!;
    expect(recorded).toHaveBeenCalledWith('sub', file, now, task.dataset_sha256);
    expect(logged.log.mock.calls).toEqual([
      [{ task_id: 'sub' }, 'task sub: Parquet file written at a download (it had none)'],
    ]);
    const manifest = JSON.parse(
      readFileSync(`${task.dataset_file}.manifest.json`, 'utf8'),
    ) as Record<string, unknown>;
    // Rewritten at a download, the manifest still says when the dataset was compiled.
    expect(manifest).toMatchObject({
      task_id: 'sub',
      rows: 1,
      sha256: task.dataset_sha256,
      gap: null,
      created_at: COMPLETED_AT.toISOString(),
      parquet: { file: 'sub.parquet', bytes: parquet!.bytes, sha256: parquet!.sha256 },
    });
  });

  // Its Last-Modified: a release before migration 1764930000000 recorded no time, and wrote a
  // file it recorded at a compile.
  it('says when the recorded file was written: parquet_written_at, or completed_at without it', async () => {
    const task = await completedTask('sub');
    const { writtenAt: _, ...file } = (await service.ensure(task))!;
    const recordedTask = {
      ...task,
      parquet_file: file.file,
      parquet_bytes: String(file.bytes),
      parquet_sha256: file.sha256,
      parquet_version: datasetParquet.PARQUET_VERSION,
    };
    recorded.mockClear();
    const writtenAt = new Date('2026-01-08T00:00:00.000Z');
    expect(await service.ensure({ ...recordedTask, parquet_written_at: writtenAt })).toEqual({
      ...file,
      writtenAt,
    });
    expect(await service.ensure(recordedTask)).toEqual({ ...file, writtenAt: COMPLETED_AT });
    expect(recorded).not.toHaveBeenCalled();
  });

  // An author's erasure rewrote the JSON lines file and cleared the Parquet record while this
  // conversion read the old rows: renamed and recorded after it, the old rows were back.
  it('renames and records nothing when the dataset was rewritten during the conversion, and converts again at the next download', async () => {
    const task = await completedTask('sub');
    recordedShas.set('sub', 'e'.repeat(64));

    expect(await service.ensure(task)).toBeNull();
    expect(existsSync(join(directory, 'sub.parquet'))).toBe(false);
    expect(recorded).not.toHaveBeenCalled();
    expect(logged.error).not.toHaveBeenCalled();
    expect(logged.log.mock.calls).toEqual([
      [{ task_id: 'sub' }, 'task sub: Parquet file given up: the dataset was rewritten meanwhile'],
    ]);

    // Not remembered as a failure: the download after (of the task as now recorded) converts.
    recordedShas.set('sub', task.dataset_sha256);
    expect(await service.ensure(task)).not.toBeNull();
  });

  // An erasure's commit lost after its rename: the old record, another file in its place.
  it("renames and records nothing when another file took the dataset file's place during the conversion", async () => {
    const task = await completedTask('sub');
    const original = readFileSync(task.dataset_file);
    const lockTask = (_id: string, work: (lock: TaskLock) => Promise<unknown>) => {
      writeFileSync(task.dataset_file, gzipSync('{"source":"REDDIT"}\n'));
      return work({ state: 'completed', datasetSha256: task.dataset_sha256 } as TaskLock);
    };
    const replaced = new DatasetParquetService(
      { recordParquet: recorded, lockTask } as unknown as TaskLifecycleRepository,
      { now: () => now } as Clock,
      testConfig({ dataDir }),
    );

    expect(await replaced.ensure(task)).toBeNull();
    expect(existsSync(join(directory, 'sub.parquet'))).toBe(false);
    expect(recorded).not.toHaveBeenCalled();
    expect(logged.log.mock.calls).toEqual([
      [
        { task_id: 'sub' },
        'task sub: Parquet file given up: the dataset file was replaced meanwhile',
      ],
    ]);
    writeFileSync(task.dataset_file, original);
  });

  it("keeps one task's failed conversion standing for the hour when another task's fails after it", async () => {
    const first = await completedTask('first');
    const second = await completedTask('second');
    const repairFirst = breakFile(first);
    breakFile(second);

    const failedAt = now.getTime();
    expect(await service.ensure(first)).toBeNull();
    now = new Date(now.getTime() + 60_000);
    expect(await service.ensure(second)).toBeNull();
    // Converting the first would now succeed: within its hour it is not tried.
    repairFirst();
    now = new Date(now.getTime() + 60_000);
    expect(await service.ensure(first)).toBeNull();
    expect(existsSync(join(directory, 'first.parquet'))).toBe(false);
    expect(logged.error.mock.calls.map(([, message]) => message as string)).toEqual([
      expect.stringMatching(
        /^task first: Parquet file not written \(tried again at a download an hour from now\): /,
      ),
      expect.stringMatching(/^task second: Parquet file not written/),
    ]);

    // Tried again an hour after the failure, to the millisecond.
    now = new Date(failedAt + PARQUET_RETRY_MS);
    expect(await service.ensure(first)).not.toBeNull();
  });

  // The task records the compiling replica's directory; another replica mounts the shared volume
  // elsewhere (or DATA_DIR was moved): the files are read and written under this DATA_DIR.
  it("reads and writes a task's files by their names under this DATA_DIR, whatever directory the task recorded", async () => {
    const task = await completedTask('sub');
    const elsewhere = join(tmpdir(), 'another-replicas-data', 'datasets');
    const recordedElsewhere = { ...task, dataset_file: join(elsewhere, 'sub.jsonl.gz') };

    const { writtenAt: _, ...file } = (await service.ensure(recordedElsewhere))!;
    expect(file.file).toBe(join(directory, 'sub.parquet'));
    expect(recorded).toHaveBeenCalledWith('sub', file, now, task.dataset_sha256);
    expect(
      JSON.parse(readFileSync(manifestPathOf(task.dataset_file), 'utf8')) as { parquet: unknown },
    ).toMatchObject({ parquet: { file: 'sub.parquet', sha256: file.sha256 } });

    // Recorded elsewhere too, the file here is served as it is, not written again.
    const parquetElsewhere = {
      ...recordedElsewhere,
      parquet_file: join(elsewhere, 'sub.parquet'),
      parquet_bytes: String(file.bytes),
      parquet_sha256: file.sha256,
      parquet_version: datasetParquet.PARQUET_VERSION,
    };
    expect(await service.ensure(parquetElsewhere)).toEqual({ ...file, writtenAt: COMPLETED_AT });
    expect(recorded).toHaveBeenCalledTimes(1);
  });

  // A full disk failing the manifest after the Parquet file was an undocumented 500 per download
  // (an audit's finding); a directory in the manifest's place fails its rename alike.
  it('answers that the Parquet file could not be written when its manifest cannot be, and records nothing', async () => {
    const task = await completedTask('sub');
    mkdirSync(manifestPathOf(task.dataset_file));

    expect(await service.ensure(task)).toBeNull();
    expect(recorded).not.toHaveBeenCalled();
    expect(logged.error.mock.calls).toEqual([
      [
        { task_id: 'sub' },
        expect.stringMatching(/^task sub: Parquet file not written \(tried again at a download/),
      ],
    ]);
    // Remembered as any failed write: the hour stands.
    rmSync(manifestPathOf(task.dataset_file), { recursive: true });
    expect(await service.ensure(task)).toBeNull();
    now = new Date(now.getTime() + PARQUET_RETRY_MS);
    expect(await service.ensure(task)).not.toBeNull();
    expect(recorded).toHaveBeenCalledTimes(1);
  });

  // Answered 503 by the exception filter, as every route answers an unavailable database.
  it('passes on a database that cannot record the file, without holding it against the next download', async () => {
    const task = await completedTask('sub');
    recorded.mockRejectedValueOnce(
      Object.assign(new Error('Connection terminated unexpectedly'), { code: 'ECONNRESET' }),
    );

    const failed = await service.ensure(task).catch((error: unknown) => error);
    expect(isDatabaseUnavailable(failed)).toBe(true);
    // The database back, the next download writes and records the file at once.
    expect(await service.ensure(task)).not.toBeNull();
    expect(recorded).toHaveBeenCalledTimes(2);
    expect(
      JSON.parse(readFileSync(manifestPathOf(task.dataset_file), 'utf8')) as { parquet: unknown },
    ).toMatchObject({ parquet: { file: 'sub.parquet' } });
  });

  // Made from the JSON lines file, the Parquet file has its rows; a file replaced on disk may not.
  it('serves and records no Parquet file whose rows differ from the dataset the task records', async () => {
    const task = await completedTask('sub');

    expect(await service.ensure({ ...task, dataset_rows: 2 })).toBeNull();
    expect(recorded).not.toHaveBeenCalled();
    expect(logged.error).toHaveBeenCalledWith(
      { task_id: 'sub' },
      expect.stringMatching(/: the Parquet file has 1 rows, the JSON lines file 2$/),
    );
  });

  it("gives up a download's conversion at shutdown, writing nothing and remembering no failure", async () => {
    const task = await completedTask('late');
    const write = jest.spyOn(datasetParquet, 'writeParquet');

    service.onModuleDestroy();

    expect(await service.ensure(task)).toBeNull();
    expect(write).toHaveBeenCalledWith(
      'reddit',
      task.dataset_file,
      join(directory, 'late.parquet'),
      expect.any(Object),
      expect.objectContaining({ stopping: expect.any(Function) }),
    );
    expect(existsSync(join(directory, 'late.parquet'))).toBe(false);
    expect(recorded).not.toHaveBeenCalled();
    expect(logged.error).not.toHaveBeenCalled();
    expect(logged.log.mock.calls).toEqual([
      [{ task_id: 'late' }, 'task late: Parquet file given up at shutdown'],
    ]);
  });

  describe('conversions at once', () => {
    /**
     * Holds every Parquet write until `release` lets the oldest held one go on, or `open` lets
     * them all go, and those after.
     */
    function holdWrites() {
      const write = datasetParquet.writeParquet;
      const held: (() => void)[] = [];
      let opened = false;
      let running = 0;
      let started = 0;
      let most = 0;
      jest.spyOn(datasetParquet, 'writeParquet').mockImplementation(async (...args) => {
        started += 1;
        running += 1;
        most = Math.max(most, running);
        if (!opened) await new Promise<void>((resolve) => held.push(resolve));
        try {
          return await write(...args);
        } finally {
          running -= 1;
        }
      });
      return {
        running: () => running,
        started: () => started,
        most: () => most,
        release: () => held.shift()?.(),
        open: () => {
          opened = true;
          held.splice(0).forEach((resolve) => resolve());
        },
      };
    }

    /**
     * Until `reached` is true (20 s at most): a fixed 50 ms pause was not enough on a loaded CI,
     * where the conversions had not reached their writes yet, so none was released, and the
     * test waited for a download for good.
     */
    const settled = (reached: () => boolean) => until(async () => reached() || undefined, 20_000);

    // Deduplicated per task only, N downloads of N tasks ran N conversions at once, each reading
    // a whole dataset on the event loop (an audit's finding).
    it(`runs at most ${PARQUET_CONVERSIONS} conversions at once in the process; the next waits for one to end`, async () => {
      const writes = holdWrites();
      const tasks = await Promise.all(['a', 'b', 'c'].map((id) => completedTask(id)));

      const downloads = tasks.map((task) => service.ensure(task));
      // A second download of a converting task shares its conversion and takes no place.
      const again = service.ensure(tasks[0]);
      await settled(() => writes.running() === 2);

      writes.release();
      expect(await downloads[0]).not.toBeNull();
      await settled(() => writes.started() === 3);
      expect(writes.running()).toBe(2);
      writes.open();
      const written = await Promise.all([...downloads, again]);

      expect(written.every((parquet) => parquet !== null)).toBe(true);
      expect(written[3]).toBe(written[0]);
      expect(writes.most()).toBe(2);
      expect(recorded).toHaveBeenCalledTimes(3);
    });

    it('refuses a conversion once the others running and queued fill the queue, until one ends', async () => {
      const writes = holdWrites();
      const admitted = PARQUET_CONVERSIONS + PARQUET_CONVERSION_QUEUE;
      const tasks = await Promise.all(
        Array.from({ length: admitted + 1 }, (_, index) => completedTask(`t${index}`)),
      );

      const downloads = tasks.slice(0, admitted).map((task) => service.ensure(task));
      await settled(() => writes.running() === PARQUET_CONVERSIONS);
      const refused = await service.ensure(tasks[admitted]).catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(ParquetBusyError);
      // Not remembered as a failure: once a place is free, the task is converted.
      writes.release();
      expect(await downloads[0]).not.toBeNull();
      const later = service.ensure(tasks[admitted]);
      writes.open();
      expect((await Promise.all([...downloads, later])).every((parquet) => parquet !== null)).toBe(
        true,
      );
      expect(logged.error).not.toHaveBeenCalled();
    });
  });
});

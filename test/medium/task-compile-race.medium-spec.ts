import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Logger } from '@nestjs/common';
import { Clock } from '../../src/common/clock/clock';
import { DataSource } from 'typeorm';
import * as atomicFile from '../../src/modules/tasks/atomic-file';
import { DatasetParquetService } from '../../src/modules/tasks/dataset-parquet.service';
import { datasetsDirectory } from '../../src/modules/tasks/dataset-path';
import { DatasetManifest, manifestPathOf } from '../../src/modules/tasks/dataset-writer';
import { PRUNE_GRACE_MS } from '../../src/modules/tasks/task-pruner';
import { TaskLifecycleRepository } from '../../src/modules/tasks/task-lifecycle.repository';
import { CompletedTask, TaskRow } from '../../src/modules/tasks/task.types';
import { insertExpiredTask, lifecycleReplica } from '../support/expired-tasks';
import { MediumDatabase, openMediumDatabase } from '../support/medium-database';
import { testConfig } from '../support/test-config';

// A plain copy of the module, whose exports a test can spy on: the transform's CommonJS
// exports are read-only getters (docs/decisions.md, "Test tiers").
jest.mock('../../src/modules/tasks/atomic-file', () => ({
  __esModule: true,
  ...jest.requireActual<object>('../../src/modules/tasks/atomic-file'),
}));

const T0 = Date.parse('2026-11-20T00:00:00Z');
const ITEMS = 5;

interface Recorded {
  state: string;
  dataset_file: string;
  dataset_rows: number;
  dataset_bytes: string;
  dataset_sha256: string;
  parquet_file: string;
  parquet_bytes: number;
}

/**
 * Two replicas sharing DATA_DIR compile the same task (the job's lock is a session advisory lock:
 * lost mid-pass, the other replica's pass runs at once). The one that completes it second, or
 * while the other was reading its items, must leave the completed dataset and its stored items
 * alone: a review's finding, where the loser renamed an empty file over the dataset after the
 * winner deleted the items, and every download was a 503 for good.
 */
describe('Two compiles of one task', () => {
  let medium: MediumDatabase;
  let database: DataSource;
  let dataDir: string;
  let now: Date;

  const replica = () => lifecycleReplica(database, dataDir, () => now);
  /** An expired Reddit task with ITEMS stored items, collected up to its expiry. */
  const expiredTask = (id: string) => insertExpiredTask(database, id, T0, ITEMS, 60_000);
  const recorded = async (id: string) =>
    (
      await database.query<Recorded[]>(
        `SELECT state, dataset_file, dataset_rows, dataset_bytes, dataset_sha256, parquet_file,
           parquet_bytes FROM scraping_tasks WHERE id = $1`,
        [id],
      )
    )[0];
  const itemCount = async (id: string) =>
    (
      await database.query<{ count: number }[]>(
        'SELECT count(*)::int AS count FROM task_items WHERE task_id = $1',
        [id],
      )
    )[0].count;
  const filesOnDisk = () => readdirSync(datasetsDirectory(dataDir)).sort();
  /**
   * Whether `work` ends (true) before a session of this database waits for a lock (false: a
   * compile, for the task's row).
   */
  const endsBeforeALockWait = async (work: Promise<unknown>) => {
    let ended = false;
    work.then(
      () => (ended = true),
      () => (ended = true),
    );
    for (;;) {
      const [{ waiting }] = await database.query<{ waiting: number }[]>(
        `SELECT count(*)::int AS waiting FROM pg_stat_activity
         WHERE datname = current_database() AND wait_event_type = 'Lock'`,
      );
      if (waiting > 0) return false;
      if (ended) return true;
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  };
  /**
   * Has the compiles' Parquet writes run `first` in place of the first one (with the write
   * itself, to call or not) and fail the second: how a test puts B's compile inside A's, between
   * A's Parquet rename and its manifest's, with B's compile lacking its Parquet file.
   */
  const parquetWrites = (
    first: (
      write: () => ReturnType<DatasetParquetService['tryWrite']>,
    ) => ReturnType<DatasetParquetService['tryWrite']>,
  ) => {
    const tryWrite = DatasetParquetService.prototype.tryWrite;
    jest
      .spyOn(DatasetParquetService.prototype, 'tryWrite')
      .mockImplementationOnce(function (this: DatasetParquetService, ...args) {
        return first(() => tryWrite.apply(this, args));
      })
      .mockResolvedValueOnce(null);
  };
  const manifestOf = (task: Recorded) =>
    JSON.parse(readFileSync(manifestPathOf(task.dataset_file), 'utf8')) as DatasetManifest;

  /** The files on disk are those the task records: what a download checks, and more. */
  const expectDatasetIntact = async (id: string, completedAt: Date) => {
    const task = await recorded(id);
    expect(task).toMatchObject({ state: 'completed', dataset_rows: ITEMS });
    const file = readFileSync(task.dataset_file);
    expect(file.length).toBe(Number(task.dataset_bytes));
    expect(createHash('sha256').update(file).digest('hex')).toBe(task.dataset_sha256);
    expect(statSync(task.parquet_file).size).toBe(Number(task.parquet_bytes));
    expect(manifestOf(task)).toMatchObject({
      rows: ITEMS,
      sha256: task.dataset_sha256,
      created_at: completedAt.toISOString(),
    });
  };

  beforeAll(async () => {
    medium = await openMediumDatabase({ own: 'taskcompilerace' });
    database = medium.dataSource;
  });
  afterAll(() => medium.close());
  // Completion times only grow across the table (markCompleted), and a pass prunes any task
  // completed before: each test starts from no task, so its times are its own in any order.
  beforeEach(() => database.query('DELETE FROM scraping_tasks'));
  beforeEach(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'task-compile-race-'));
    now = new Date(T0 + 60_000);
    for (const level of ['log', 'warn', 'error'] as const)
      jest.spyOn(Logger.prototype, level).mockImplementation(() => undefined);
  });
  afterEach(() => {
    jest.restoreAllMocks();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('leaves the dataset and the stored items alone when the second compile starts after the first completed', async () => {
    await expiredTask('after');
    const a = replica();
    const b = replica();
    // Both passes claim the same list; A's compiles first.
    const snapshot: TaskRow[] = await b.repository.claimExpired(
      now,
      3_600_000,
      3_600_000,
      86_400_000,
    );
    expect(snapshot.map((task) => task.id)).toEqual(['after']);
    const completedAt = now;
    expect(await a.service.compileExpired()).toBe(1);
    await expectDatasetIntact('after', completedAt);

    now = new Date(now.getTime() + 1000);
    jest.spyOn(b.repository, 'claimExpired').mockResolvedValue(snapshot);
    await b.service.compileExpired();

    await expectDatasetIntact('after', completedAt);
    expect(await itemCount('after')).toBe(ITEMS);
    expect(Logger.prototype.log).not.toHaveBeenCalledWith('task after: dataset of 0 rows');
  });

  it('leaves the dataset alone when the first completes while the second reads the items', async () => {
    await expiredTask('during');
    const a = replica();
    const b = replica();
    const completedAt = now;
    // B's pass claims the task and starts reading; A's pass completes it meanwhile.
    const itemsPage = b.repository.itemsPage.bind(b.repository);
    jest.spyOn(b.repository, 'itemsPage').mockImplementationOnce(async (...page) => {
      expect(await a.service.compileExpired()).toBe(1);
      now = new Date(now.getTime() + 1000);
      return itemsPage(...page);
    });
    await b.service.compileExpired();

    await expectDatasetIntact('during', completedAt);
    expect(await itemCount('during')).toBe(ITEMS);
  });

  it('does not complete the task when the other compile renamed its files over these and, failing, removed them', async () => {
    await expiredTask('replaced');
    const a = replica();
    const b = replica();
    // B's compile renames its files over A's, then fails while the task is still compiling, and
    // removes them as its own: the JSON lines file A's would record is gone.
    jest.spyOn(b.repository, 'markCompleted').mockRejectedValue(new Error('connection lost'));
    const lockTask = a.repository.lockTask.bind(a.repository);
    jest
      .spyOn(a.repository, 'lockTask')
      // Its look for a complete dataset at the path (keepCompleteDataset), then its two renames.
      .mockImplementationOnce(lockTask)
      .mockImplementationOnce(lockTask)
      .mockImplementationOnce(lockTask)
      // Before A renames its manifest: its JSON lines and Parquet files are in place. B's
      // compile fails: it completes nothing.
      .mockImplementationOnce(async (id, work) => {
        expect(await b.service.compileExpired()).toBe(0);
        return lockTask(id, work);
      });
    const aCount = await a.service.compileExpired();

    expect(await recorded('replaced')).toMatchObject({ state: 'compiling' });
    // A's manifest, renamed after B removed its files, went with A's giving up.
    expect(filesOnDisk()).toEqual([]);
    expect(aCount).toBe(0);
    // The next compile, once B's failure's retry is due, completes it with its files in place.
    now = new Date(now.getTime() + 3_600_000);
    const completedAt = now;
    expect(await replica().service.compileExpired()).toBe(1);
    await expectDatasetIntact('replaced', completedAt);
  });

  // The check of A's files and its `completed` update were a round trip apart: B's compile
  // renamed its files over A's between them, then, failing, removed them, and A's update recorded
  // files no longer there. The check and the update now hold the task row's lock, which B's
  // renames take too: B waits, then finds the task completed and renames nothing.
  it('completes the task only with its own files, whatever another compile does between the check of its files and the update', async () => {
    await expiredTask('window');
    const completedAt = now;
    const a = replica();
    const b = replica();
    jest.spyOn(b.repository, 'markCompleted').mockRejectedValue(new Error('connection lost'));
    const markCompleted = a.repository.markCompleted.bind(a.repository);
    let bCompiled: Promise<number> | undefined;
    let bEndedFirst: boolean | undefined;
    jest.spyOn(a.repository, 'markCompleted').mockImplementationOnce(async (...args) => {
      // A has checked its files. B's compile runs to its end, or to where it waits for a lock.
      bCompiled = b.service.compileExpired();
      bEndedFirst = await endsBeforeALockWait(bCompiled);
      return markCompleted(...args);
    });
    expect(await a.service.compileExpired()).toBe(1);
    const bCount = await bCompiled;

    await expectDatasetIntact('window', completedAt);
    expect(filesOnDisk()).toEqual([
      'window.jsonl.gz',
      'window.jsonl.gz.manifest.json',
      'window.parquet',
    ]);
    // B waited for A's lock, then renamed nothing: the task was completed when it had it.
    expect({ bEndedFirst, bCount }).toEqual({ bEndedFirst: false, bCount: 0 });
  });

  // A gave up and left its Parquet file: beside a task completed without one, a stray file (the
  // next download's conversion renames over it), and for good beside a task that failed.
  it("removes, as it gives up, the files it renamed that are still its own, never the other compile's", async () => {
    await expiredTask('stray');
    const a = replica();
    const b = replica();
    let bCount: number | undefined;
    // A's Parquet file is in place: B's compile runs meanwhile, its Parquet write failing, and
    // completes the task with its JSON lines file and manifest.
    parquetWrites(async (write) => {
      const written = await write();
      bCount = await b.service.compileExpired();
      return written;
    });
    const aCount = await a.service.compileExpired();

    const task = await recorded('stray');
    expect(task).toMatchObject({ state: 'completed', dataset_rows: ITEMS, parquet_file: null });
    expect(filesOnDisk()).toEqual(['stray.jsonl.gz', 'stray.jsonl.gz.manifest.json']);
    const file = readFileSync(task.dataset_file);
    expect(createHash('sha256').update(file).digest('hex')).toBe(task.dataset_sha256);
    expect(manifestOf(task)).toMatchObject({ sha256: task.dataset_sha256, parquet: null });
    expect({ aCount, bCount }).toEqual({ aCount: 0, bCount: 1 });
  });

  // A download's conversion renamed its Parquet file into place without the task row's lock: one
  // landing between a giving-up compile's identity check of its own stray Parquet file and its
  // removal was removed, though the task recorded it (the next download converted again). The
  // conversion's renames now take the lock, as a compile's do, and wait for the removal.
  it("keeps a download's Parquet conversion out of a giving-up compile's removal of its own file", async () => {
    await expiredTask('converted');
    const a = replica();
    const b = replica();
    const clock = { now: () => now } as Clock;
    const downloads = new DatasetParquetService(
      new TaskLifecycleRepository(database),
      clock,
      testConfig({ dataDir }),
    );
    // A's Parquet file is in place; B completes the task without one (its write failed), and A,
    // giving up, removes its stray Parquet file: a download converts between the check and the
    // removal.
    parquetWrites(async (write) => {
      const written = await write();
      await b.service.compileExpired();
      return written;
    });
    let converted: Promise<unknown> | undefined;
    let conversionEndedFirst: boolean | undefined;
    jest
      .spyOn(atomicFile, 'removeIfUnchanged')
      .mockImplementation(async (path: string, identity: string) => {
        if ((await atomicFile.fileIdentity(path)) !== identity) return;
        if (path.endsWith('.parquet')) {
          const [task] = await database.query<CompletedTask[]>(
            `SELECT * FROM scraping_tasks WHERE id = 'converted'`,
          );
          converted = downloads.ensure(task);
          conversionEndedFirst = await endsBeforeALockWait(converted);
        }
        await rm(path, { force: true });
      });
    expect(await a.service.compileExpired()).toBe(0);
    await converted;

    const task = await recorded('converted');
    expect(task).toMatchObject({ state: 'completed', dataset_rows: ITEMS });
    expect(task.parquet_file).not.toBeNull();
    expect(filesOnDisk()).toContain('converted.parquet');
    expect(statSync(task.parquet_file).size).toBe(Number(task.parquet_bytes));
    expect(manifestOf(task)).toMatchObject({ parquet: { bytes: Number(task.parquet_bytes) } });
    // The conversion waited for the removal's lock, then renamed its file.
    expect(conversionEndedFirst).toBe(false);
  });

  it('leaves no file of a task that failed for good, neither its own nor those of a compile that gave up', async () => {
    await expiredTask('failing');
    // Two attempts failed already: B's is the last.
    await database.query(`UPDATE scraping_tasks SET compile_attempts = 2 WHERE id = 'failing'`);
    const a = replica();
    const b = replica();
    jest.spyOn(b.repository, 'markCompleted').mockRejectedValue(new Error('connection lost'));
    let bCount: number | undefined;
    parquetWrites(async (write) => {
      const written = await write();
      bCount = await b.service.compileExpired();
      return written;
    });
    const aCount = await a.service.compileExpired();

    expect(await recorded('failing')).toMatchObject({ state: 'failed' });
    expect(filesOnDisk()).toEqual([]);
    expect({ aCount, bCount }).toEqual({ aCount: 0, bCount: 0 });
  });

  // Kept at completion, the items still go: once no compile of the task can be reading them.
  it('deletes the stored items of a completed task only once the grace period has passed', async () => {
    await expiredTask('pruned');
    // A day on: completion times only grow, so this one is `now`, after the tasks above.
    now = new Date(T0 + 86_400_000);
    const completedAt = now;
    await replica().service.compileExpired();

    // Each pass a fresh replica, as another replica's pass may be the next.
    now = new Date(completedAt.getTime() + PRUNE_GRACE_MS - 1000);
    await replica().service.pruneCompletedItems();
    expect(await itemCount('pruned')).toBe(ITEMS);

    now = new Date(completedAt.getTime() + PRUNE_GRACE_MS);
    expect(await replica().service.pruneCompletedItems()).toBe(1);
    expect(await itemCount('pruned')).toBe(0);
    await expectDatasetIntact('pruned', completedAt);
  });

  // A soak audit's finding: after a pass that found none, the pruner looked again only an hour
  // of real time later, so a task completed just after it kept its items for about two hours.
  it('deletes the stored items of a task as soon as its grace period has passed, even after a pass that found none', async () => {
    await expiredTask('pruned-on-time');
    now = new Date(T0 + 2 * 86_400_000);
    const completedAt = now;
    const lifecycle = replica();
    await lifecycle.service.compileExpired();

    now = new Date(completedAt.getTime() + PRUNE_GRACE_MS - 1000);
    expect(await lifecycle.service.pruneCompletedItems()).toBe(0);
    now = new Date(completedAt.getTime() + PRUNE_GRACE_MS);
    expect(await lifecycle.service.pruneCompletedItems()).toBe(1);
    expect(await itemCount('pruned-on-time')).toBe(0);
  });
});

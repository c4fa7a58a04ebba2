import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Logger } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { DatasetManifest, manifestPathOf } from '../../src/modules/tasks/dataset-writer';
import { PRUNE_GRACE_MS } from '../../src/modules/tasks/task-pruner';
import { TaskRow } from '../../src/modules/tasks/task.types';
import { insertExpiredTask, lifecycleReplica } from '../support/expired-tasks';
import { MediumDatabase, openMediumDatabase } from '../support/medium-database';

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
    const isCompiling = a.repository.isCompiling.bind(a.repository);
    jest
      .spyOn(a.repository, 'isCompiling')
      .mockImplementationOnce(isCompiling)
      // Before A renames its manifest: its JSON lines (and Parquet) files are in place.
      .mockImplementationOnce(async (id) => {
        expect(await b.service.compileExpired()).toBe(1);
        return isCompiling(id);
      });
    await a.service.compileExpired();

    expect(await recorded('replaced')).toMatchObject({ state: 'compiling' });
    // The next compile, once B's failure's retry is due, completes it with its files in place.
    now = new Date(now.getTime() + 3_600_000);
    const completedAt = now;
    expect(await replica().service.compileExpired()).toBe(1);
    await expectDatasetIntact('replaced', completedAt);
  });

  // Kept at completion, the items still go: once no compile of the task can be reading them.
  it('deletes the stored items of a completed task only once the grace period has passed', async () => {
    await expiredTask('pruned');
    // A day on: completion times only grow, so this one is `now`, after the tasks above.
    now = new Date(T0 + 86_400_000);
    const completedAt = now;
    await replica().service.compileExpired();

    // Each pass a fresh replica: one finding none looks again an hour of real time later.
    now = new Date(completedAt.getTime() + PRUNE_GRACE_MS - 1000);
    await replica().service.pruneCompletedItems();
    expect(await itemCount('pruned')).toBe(ITEMS);

    now = new Date(completedAt.getTime() + PRUNE_GRACE_MS);
    expect(await replica().service.pruneCompletedItems()).toBe(1);
    expect(await itemCount('pruned')).toBe(0);
    await expectDatasetIntact('pruned', completedAt);
  });
});

import { DataSource } from 'typeorm';
import { CompiledDataset } from '../../src/modules/tasks/dataset-writer';
import { TaskLifecycleRepository } from '../../src/modules/tasks/task-lifecycle.repository';
import { MediumDatabase, openMediumDatabase } from '../support/medium-database';

const T0 = Date.parse('2026-11-20T00:00:00Z');
const at = (minutes: number) => new Date(T0 + minutes * 60_000);
const HOUR = 3_600_000;
const DAY = 24 * HOUR;

const DATASET: CompiledDataset = {
  file: 'task.jsonl.gz',
  rows: 0,
  bytes: 20,
  sha256: 'e3b0',
  start: null,
  end: null,
  parquet: null,
};

/**
 * A task's compile on a database of its own: the items read in pages for the dataset, and the
 * states and failure reasons that compile attempts leave.
 */
describe('TaskLifecycleRepository compiling', () => {
  let medium: MediumDatabase;
  let database: DataSource;
  let repository: TaskLifecycleRepository;

  /**
   * A task in `state`, registered seven days before T0 and collected up to then: no final
   * collection is awaited (task-final-collection.medium-spec.ts).
   */
  const insert = (id: string, state: string) =>
    database.query(
      `INSERT INTO scraping_tasks (id, platform, label, state, registered_by, registered_at, expires_at, collect_head)
       VALUES ($1, 'x', '#ai', $2, '5Hotkey', $3::timestamptz - interval '7 days', $3, $3)`,
      [id, state, at(0).toISOString()],
    );
  const task = async (id: string) =>
    (
      await database.query<
        { state: string; failure_reason: string | null; compile_attempts: number }[]
      >('SELECT state, failure_reason, compile_attempts FROM scraping_tasks WHERE id = $1', [id])
    )[0];

  beforeAll(async () => {
    medium = await openMediumDatabase({ own: 'taskcompile' });
    database = medium.dataSource;
    repository = new TaskLifecycleRepository(database);
  });
  afterAll(() => medium.close());

  // Its seven days end at expires_at: no longer collected then (expires_at > now), so compiled.
  it('claims a task for compiling the instant its seven days end', async () => {
    await insert('expires-now', 'active');
    const claimed = await repository.claimExpired(at(0), HOUR, HOUR, DAY);
    expect(claimed.map((row) => row.id)).toContain('expires-now');
    expect(await task('expires-now')).toMatchObject({ state: 'compiling' });
  });

  // Pages of 2 over three items of one instant: the page's end falls inside the instant.
  it('reads every item once, oldest first, in pages that end inside an instant', async () => {
    await insert('paged', 'compiling');
    const items: [string, number][] = [
      ['https://x.com/a/status/4', 2],
      ['https://x.com/a/status/3', 1],
      ['https://x.com/a/status/2', 1],
      ['https://x.com/a/status/1', 1],
      ['https://x.com/a/status/5', 0],
    ];
    for (const [uri, minute] of items)
      await database.query(
        `INSERT INTO task_items (task_id, uri, datetime, item, collected_at) VALUES ('paged', $1, $2, '{}', $2)`,
        [uri, at(minute).toISOString()],
      );
    const read: string[] = [];
    let after: { uri: string; datetime: Date } | null = null;
    for (;;) {
      const page = await repository.itemsPage(
        'paged',
        after?.uri ?? null,
        after?.datetime ?? null,
        2,
      );
      read.push(...page.map((row) => row.uri));
      if (page.length < 2) break;
      after = page[page.length - 1];
    }
    expect(read).toEqual([
      'https://x.com/a/status/5',
      'https://x.com/a/status/1',
      'https://x.com/a/status/2',
      'https://x.com/a/status/3',
      'https://x.com/a/status/4',
    ]);
  });

  it('fails a task at its last allowed attempt, and a compile that succeeds after a failure leaves no reason', async () => {
    await insert('fails', 'compiling');
    expect(
      await repository.recordCompileFailure('fails', 'ENOSPC: no space left on device', 2, at(1)),
    ).toEqual({ state: 'compiling', compile_attempts: 1 });
    expect(await task('fails')).toMatchObject({ state: 'compiling', compile_attempts: 1 });
    // The compile is told the task failed for good, for its line.
    expect(
      await repository.recordCompileFailure('fails', 'ENOSPC: no space left on device', 2, at(1)),
    ).toEqual({ state: 'failed', compile_attempts: 2 });
    expect(await task('fails')).toMatchObject({
      state: 'failed',
      compile_attempts: 2,
      failure_reason: 'ENOSPC: no space left on device',
    });

    // Failed, it is not compiling: nothing more is counted, and the compile is told so.
    expect(await repository.recordCompileFailure('fails', 'another reason', 2, at(1))).toBeNull();
    expect(await task('fails')).toMatchObject({ compile_attempts: 2 });

    await insert('recovers', 'compiling');
    await repository.recordCompileFailure('recovers', 'ENOSPC: no space left on device', 2, at(1));
    await repository.markCompleted('recovers', DATASET, at(1));
    expect(await task('recovers')).toMatchObject({ state: 'completed', failure_reason: null });
  });

  // A full disk for three minutes failed every task expiring meanwhile for good: its three
  // attempts came a tick apart (an audit's finding).
  it('tries a failed compile again only after an hour, then two, so that three attempts span three hours', async () => {
    await insert('backs-off', 'compiling');
    const claimed = async (minutes: number) =>
      (await repository.claimExpired(at(minutes), HOUR, HOUR, DAY)).some(
        (row) => row.id === 'backs-off',
      );
    expect(await claimed(0)).toBe(true);

    await repository.recordCompileFailure('backs-off', 'ENOSPC: no space left on device', 3, at(0));
    expect(await claimed(1)).toBe(false);
    expect(await claimed(59)).toBe(false);
    expect(await claimed(60)).toBe(true);

    await repository.recordCompileFailure(
      'backs-off',
      'ENOSPC: no space left on device',
      3,
      at(60),
    );
    expect(await claimed(179)).toBe(false);
    expect(await claimed(180)).toBe(true);

    await repository.recordCompileFailure(
      'backs-off',
      'ENOSPC: no space left on device',
      3,
      at(180),
    );
    expect(await task('backs-off')).toMatchObject({ state: 'failed', compile_attempts: 3 });
  });

  const itemCount = async (id: string) =>
    (
      await database.query<{ count: number }[]>(
        'SELECT count(*)::int AS count FROM task_items WHERE task_id = $1',
        [id],
      )
    )[0].count;
  const addItem = (id: string, n: number) =>
    database.query(
      `INSERT INTO task_items (task_id, uri, datetime, item, collected_at) VALUES ($1, $2, $3, '{}', $3)`,
      [id, `https://x.com/a/status/${n}`, at(0).toISOString()],
    );

  // Deleted as it completed, a second compile of the task (another replica's, its job lock
  // lost) read none and renamed an empty dataset over the first's (a review's finding).
  it("keeps a task's stored items as it completes it, and a failed task's", async () => {
    await insert('completes', 'compiling');
    await insert('gives-up', 'compiling');
    for (const id of ['completes', 'gives-up']) for (const n of [1, 2]) await addItem(id, n);

    expect(await repository.markCompleted('completes', DATASET, at(1))).toBe(true);
    expect(await task('completes')).toMatchObject({ state: 'completed' });
    expect(await itemCount('completes')).toBe(2);

    await repository.recordCompileFailure('gives-up', 'EIO: i/o error', 1, at(1));
    expect(await repository.markCompleted('gives-up', DATASET, at(2))).toBe(false);
    expect(await task('gives-up')).toMatchObject({ state: 'failed' });
    expect(await itemCount('gives-up')).toBe(2);
    expect(await repository.deleteCompletedItems('gives-up')).toBe(0);
    expect(await itemCount('gives-up')).toBe(2);
  });

  it('lists the completed tasks whose items are still stored, completed before a time, and deletes those', async () => {
    for (const id of ['kept-1', 'kept-2']) {
      await insert(id, 'completed');
      await database.query(
        `UPDATE scraping_tasks SET dataset_file = $2, dataset_bytes = 20, completed_at = $3 WHERE id = $1`,
        [id, `/data/datasets/${id}.jsonl.gz`, at(id === 'kept-1' ? 1 : 2).toISOString()],
      );
      await addItem(id, 1);
    }
    const listed = async (skip: string[], completedBefore = at(2)) =>
      (await repository.completedWithItems(skip, completedBefore, 10))
        .map((row) => row.id)
        .filter((id) => id.startsWith('kept-'));
    expect(await listed([])).toEqual(['kept-1', 'kept-2']);
    expect(await listed(['kept-1'])).toEqual(['kept-2']);
    // Completed since: a compile of it may still be reading its items.
    expect(await listed([], at(1))).toEqual(['kept-1']);

    expect(await repository.deleteCompletedItems('kept-1')).toBe(1);
    expect(await itemCount('kept-1')).toBe(0);
    expect(await listed([])).toEqual(['kept-2']);
  });

  // A replica whose compile outlived the task's failure elsewhere: the failed task stays failed.
  it('completes only a task that is compiling, and says whether it did', async () => {
    await insert('failed-meanwhile', 'failed');
    expect(await repository.markCompleted('failed-meanwhile', DATASET, at(1))).toBe(false);
    expect(await task('failed-meanwhile')).toMatchObject({ state: 'failed' });

    await insert('completes-once', 'compiling');
    expect(await repository.markCompleted('completes-once', DATASET, at(1))).toBe(true);
    expect(await task('completes-once')).toMatchObject({ state: 'completed' });
    expect(await repository.markCompleted('completes-once', DATASET, at(2))).toBe(false);
  });

  // A compile's renames and its completion hold the task row's lock: a second compile's wait.
  it("locks the task's row for the length of lockTask, and completes the task in its transaction", async () => {
    await insert('locked', 'compiling');
    expect(await repository.lockTask('missing', (lock) => Promise.resolve(lock.state))).toBe(null);
    const order: string[] = [];
    let second: Promise<string | null> | undefined;
    await repository.lockTask('locked', async (lock) => {
      expect(lock.state).toBe('compiling');
      second = repository.lockTask('locked', (after) => {
        order.push('second');
        return Promise.resolve(after.state);
      });
      // Long enough for the second to have taken the lock, were it free.
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(await repository.markCompleted('locked', DATASET, at(1), lock)).toBe(true);
      order.push('first');
    });
    // The second found the state the first committed.
    expect(await second).toBe('completed');
    expect(order).toEqual(['first', 'second']);
  });

  // Two compiles completing at once (one with its job lock lost): the later time commits later,
  // or a poller that saw it with `completed_after` would never see the earlier.
  it('commits completions in the order of their times', async () => {
    await insert('completes-first', 'compiling');
    await insert('completes-second', 'compiling');
    let second: Promise<boolean> | undefined;
    let secondCommitted = false;
    await repository.lockTask('completes-first', async (lock) => {
      expect(await repository.markCompleted('completes-first', DATASET, at(1), lock)).toBe(true);
      second = repository
        .markCompleted('completes-second', DATASET, at(5))
        .finally(() => (secondCommitted = true));
      // Long enough for the second to have committed, were it not waiting.
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(secondCommitted).toBe(false);
    });
    expect(await second).toBe(true);
    const [first, later] = await database.query<{ completed_at: Date }[]>(
      `SELECT completed_at FROM scraping_tasks WHERE id IN ('completes-first', 'completes-second')
       ORDER BY id`,
    );
    expect(later.completed_at.getTime()).toBeGreaterThan(first.completed_at.getTime());
  });

  // Work that throws commits nothing of what it recorded.
  it('rolls back what was recorded under the lock when the work throws', async () => {
    await insert('rolled-back', 'compiling');
    await expect(
      repository.lockTask('rolled-back', async (lock) => {
        await repository.markCompleted('rolled-back', DATASET, at(1), lock);
        throw new Error('rename failed');
      }),
    ).rejects.toThrow('rename failed');
    expect(await task('rolled-back')).toMatchObject({ state: 'compiling' });
  });
});

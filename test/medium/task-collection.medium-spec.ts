import { randomBytes } from 'node:crypto';
import { DataSource } from 'typeorm';
import { NO_PROGRESS } from '../../src/modules/tasks/collection-paging';
import { TaskLifecycleRepository } from '../../src/modules/tasks/task-lifecycle.repository';
import { TasksRepository } from '../../src/modules/tasks/tasks.repository';
import { redditComment } from '../support/items';
import { MediumDatabase, openMediumDatabase } from '../support/medium-database';

const HOUR = 3_600_000;
const T0 = Date.parse('2026-11-20T00:00:00Z');
const at = (hours: number) => new Date(T0 + hours * HOUR);

/** Reddit comment `n`, posted at `datetime`. */
function comment(n: number, datetime: Date) {
  const uri = `https://www.reddit.com/r/bitcoin/comments/abc/title/c${n}/`;
  const time = datetime.toISOString();
  return redditComment({ uri, url: uri, id: `t1_c${n}`, datetime: time, createdAt: time });
}

/**
 * A task's collections on a database of its own: which tasks are due, and what a collection
 * stores of what the miners sent.
 */
describe('TaskLifecycleRepository collecting', () => {
  let medium: MediumDatabase;
  let database: DataSource;
  let repository: TaskLifecycleRepository;

  /** An active task registered at T0, for posts from `postStart` to `postEnd` (hours). */
  const insert = (id: string, postStart: number | null, postEnd: number | null) =>
    database.query(
      `INSERT INTO scraping_tasks (id, platform, label, state, registered_by, registered_at, expires_at, post_start, post_end)
       VALUES ($1, 'reddit', 'r/bitcoin', 'active', '5Hotkey', $2, $2::timestamptz + interval '7 days', $3, $4)`,
      [
        id,
        at(0).toISOString(),
        postStart === null ? null : at(postStart).toISOString(),
        postEnd === null ? null : at(postEnd).toISOString(),
      ],
    );

  beforeAll(async () => {
    medium = await openMediumDatabase({ own: 'taskcollect' });
    database = medium.dataSource;
    repository = new TaskLifecycleRepository(database);
  });
  afterAll(() => medium.close());

  // Registered for posts from 48 hours on: collected before, it stored what came before them.
  it('leaves a task out of the collections until its post window begins, and not behind', async () => {
    await insert('later', 48, 72);
    await insert('now', null, null);
    const due = async (hours: number) =>
      (await repository.dueForCollection(at(hours), HOUR, 60_000, 10)).map((task) => task.id);
    expect(await due(1)).toEqual(['now']);
    expect(await due(47)).toEqual(['now']);
    expect(await due(48)).toEqual(['later', 'now']);

    const tasks = new TasksRepository(database);
    expect(await tasks.countBehind(at(47), HOUR + 60_000)).toBe(1);
    expect(await tasks.countBehind(at(50), HOUR + 60_000)).toBe(2);
  });

  it("stores only the items posted within the task's window, and counts those left out", async () => {
    await insert('window', 10, 20);
    const offered = [
      comment(1, at(9)),
      comment(2, at(10)),
      comment(3, at(15)),
      comment(4, at(20)),
      comment(5, at(21)),
    ];
    expect(await repository.addItems('window', offered, NO_PROGRESS, at(30))).toEqual({
      added: 3,
      outsideWindow: 2,
    });
    const rows = await database.query<{ uri: string }[]>(
      `SELECT uri FROM task_items WHERE task_id = 'window' ORDER BY datetime`,
    );
    expect(rows.map((row) => row.uri)).toEqual([2, 3, 4].map((n) => offered[n - 1].uri));
    const [task] = await database.query<{ items_collected: number }[]>(
      `SELECT items_collected FROM scraping_tasks WHERE id = 'window'`,
    );
    expect(task.items_collected).toBe(3);
  });

  // A uri is a key of task_items' btree indexes, whose entries Postgres caps at 2,704 bytes: one
  // miner's item with a longer one failed the statement, and the collection stored nothing.
  it("stores a collection's items beside a Reddit item whose uri no index could hold", async () => {
    await insert('long-uri', null, null);
    const honest = comment(1, at(1));
    // Random, so that Postgres cannot compress it under the cap.
    const slug = randomBytes(2_000).toString('hex');
    const uri = `https://www.reddit.com/r/bitcoin/comments/abc/${slug}/c2/`;
    const hostile = { ...comment(2, at(1)), uri, url: uri };

    await repository.addItems('long-uri', [honest, hostile], NO_PROGRESS, at(2));

    const rows = await database.query<{ uri: string }[]>(
      `SELECT uri FROM task_items WHERE task_id = 'long-uri'`,
    );
    expect(rows.map((row) => row.uri)).toEqual([honest.uri]);
  });
});

import { DataSource, EntityManager } from 'typeorm';
import { TaskListFilter } from '../../src/modules/tasks/task.types';
import { TaskLifecycleRepository } from '../../src/modules/tasks/task-lifecycle.repository';
import { TasksRepository } from '../../src/modules/tasks/tasks.repository';
import { MediumDatabase, openMediumDatabase } from '../support/medium-database';

const T0 = Date.parse('2026-11-20T00:00:00Z');
const at = (hours: number) => new Date(T0 + hours * 3_600_000);

/**
 * The task list's filters on a database of its own: `completed_after` lists completed tasks in
 * the order they completed, and the count is over every page.
 */
describe('TasksRepository.list', () => {
  let medium: MediumDatabase;
  let database: DataSource;
  let repository: TasksRepository;

  /** A task registered at `registered` (hours after T0), completed at `completed` if given. */
  const insert = (id: string, registered: number, completed?: number) =>
    database.query(
      `INSERT INTO scraping_tasks (id, platform, label, state, registered_by, registered_at, expires_at, completed_at)
       VALUES ($1, 'x', '#ai', $2, '5Hotkey', $3, $3::timestamptz + interval '7 days', $4)`,
      [
        id,
        completed === undefined ? 'active' : 'completed',
        at(registered).toISOString(),
        completed === undefined ? null : at(completed).toISOString(),
      ],
    );
  const ids = (rows: { id: string }[]) => rows.map((row) => row.id);
  /** The ids of a page of 10 and the total the filter selects. */
  const listed = async (filter: TaskListFilter) => {
    const [rows, total] = await repository.list(filter, 10, 0);
    return { ids: ids(rows), total };
  };

  beforeAll(async () => {
    medium = await openMediumDatabase({ own: 'tasklist' });
    database = medium.dataSource;
    repository = new TasksRepository(database);
    // Registered in one order, completed in another.
    await insert('first-registered', 0, 200);
    await insert('second-registered', 1, 180);
    await insert('third-registered', 2, 190);
    await insert('still-active', 3);
  });
  afterAll(() => medium.close());

  it('lists newest registration first without completed_after', async () => {
    expect(await listed({})).toEqual({
      ids: ['still-active', 'third-registered', 'second-registered', 'first-registered'],
      total: 4,
    });
    expect((await listed({ state: 'completed' })).ids).toEqual([
      'third-registered',
      'second-registered',
      'first-registered',
    ]);
  });

  it('lists the tasks completed after an instant, first completed first, strictly after it', async () => {
    expect((await listed({ completedAfter: at(0) })).ids).toEqual([
      'second-registered',
      'third-registered',
      'first-registered',
    ]);
    // The bound is exclusive: a poll from the last task's completed_at does not list it again.
    expect(await listed({ completedAfter: at(190) })).toEqual({
      ids: ['first-registered'],
      total: 1,
    });
    expect(await listed({ completedAfter: at(200) })).toEqual({ ids: [], total: 0 });
  });

  it('counts the tasks of the page it lists, though a task is registered between the reads', async () => {
    // Once the page's read has answered, before the count: another session registers a task.
    let betweenReads: (() => Promise<unknown>) | undefined = () => insert('meanwhile', 3.5);
    const query = EntityManager.prototype.query;
    const spy = jest.spyOn(EntityManager.prototype, 'query').mockImplementation(async function (
      this: EntityManager,
      ...args: Parameters<EntityManager['query']>
    ) {
      const result: unknown = await query.apply(this, args);
      const run = betweenReads;
      betweenReads = undefined;
      await run?.();
      return result;
    });
    try {
      const [rows, total] = await repository.list({ state: 'active' }, 1, 0);
      expect(betweenReads).toBeUndefined();
      expect({ ids: ids(rows), total }).toEqual({ ids: ['still-active'], total: 1 });
    } finally {
      spy.mockRestore();
    }
    expect(await listed({ state: 'active' })).toEqual({
      ids: ['meanwhile', 'still-active'],
      total: 2,
    });
    await database.query(`DELETE FROM scraping_tasks WHERE id = 'meanwhile'`);
  });

  it('completes tasks at times that only grow, whatever the clock of the one completing them', async () => {
    await insert('compiled-first', 4);
    await insert('compiled-second', 5);
    for (const id of ['compiled-first', 'compiled-second']) {
      await database.query(`UPDATE scraping_tasks SET state = 'compiling' WHERE id = $1`, [id]);
      // Both at the same instant, before the last completion: a replica whose clock is behind.
      await new TaskLifecycleRepository(database).markCompleted(
        id,
        {
          file: `${id}.jsonl.gz`,
          rows: 0,
          bytes: 1,
          sha256: 'e3b0',
          start: null,
          end: null,
          parquet: null,
        },
        at(100),
      );
    }
    const [completed] = await repository.list({ completedAfter: at(0) }, 10, 0);
    expect(completed.slice(-2).map((task) => [task.id, task.completed_at!.toISOString()])).toEqual([
      ['compiled-first', new Date(at(200).getTime() + 1).toISOString()],
      ['compiled-second', new Date(at(200).getTime() + 2).toISOString()],
    ]);
    await database.query(`DELETE FROM scraping_tasks WHERE id LIKE 'compiled-%'`);
  });

  it('pages through completions with offset, the count covering every page', async () => {
    const filter = { completedAfter: at(0) };
    const page = async (offset: number) => {
      const [rows, total] = await repository.list(filter, 2, offset);
      return { ids: ids(rows), total };
    };
    expect(await page(0)).toEqual({ ids: ['second-registered', 'third-registered'], total: 3 });
    expect(await page(2)).toEqual({ ids: ['first-registered'], total: 3 });
    // Past the last page: no rows, the total still counted.
    expect(await page(4)).toEqual({ ids: [], total: 3 });
    // A filter on another state selects nothing: only completed tasks have a completion time.
    expect(await listed({ ...filter, state: 'active' })).toEqual({ ids: [], total: 0 });
  });
});

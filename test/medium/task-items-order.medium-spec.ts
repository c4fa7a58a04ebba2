import { DataSource } from 'typeorm';
import { TaskLifecycleRepository } from '../../src/modules/tasks/task-lifecycle.repository';
import { MediumDatabase, openMediumDatabase } from '../support/medium-database';

// Full tasks, their items interleaved: a task of a few thousand rows is sorted faster than
// read in index order, and the planner rightly sorts it.
const TASKS = 6;
const ITEMS_PER_TASK = 20_000;
const PAGE = 1000;

interface PlanNode {
  'Node Type': string;
  'Index Name'?: string;
  'Index Cond'?: string;
  Plans?: PlanNode[];
}

/** Every node of a plan, depth first. */
function nodesOf(plan: PlanNode): PlanNode[] {
  return [plan, ...(plan.Plans ?? []).flatMap(nodesOf)];
}

/**
 * A compile reads a task's items a page at a time in dataset order (itemsPage). With only the
 * primary key (task_id, uri), each page read and sorted all of the task's rows: 113.6 s for a
 * 170k-row task (an audit's finding). The index on (task_id, datetime, uri), migration
 * TaskItemsOrderIndex, lets a page read just its rows, in order, from where the last ended.
 */
describe('TaskLifecycleRepository.itemsPage plan', () => {
  let medium: MediumDatabase;
  let database: DataSource;

  /** The plan of the very query itemsPage runs, with its parameters. */
  const planOf = async (afterUri: string | null, afterTime: Date | null): Promise<PlanNode[]> => {
    let plan: PlanNode | undefined;
    const explaining = {
      query: async (sql: string, parameters: unknown[]) => {
        const [row] = await database.query<{ 'QUERY PLAN': { Plan: PlanNode }[] }[]>(
          `EXPLAIN (FORMAT JSON) ${sql}`,
          parameters,
        );
        plan = row['QUERY PLAN'][0].Plan;
        return [];
      },
    } as unknown as DataSource;
    await new TaskLifecycleRepository(explaining).itemsPage('task-1', afterUri, afterTime, PAGE);
    return nodesOf(plan!);
  };

  beforeAll(async () => {
    medium = await openMediumDatabase({ own: 'taskitemsorder' });
    database = medium.dataSource;
    await database.query(
      `INSERT INTO scraping_tasks (id, platform, label, state, registered_by, registered_at, expires_at)
       SELECT 'task-' || n, 'x', '#ai', 'compiling', '5Hotkey', now() - interval '7 days', now()
       FROM generate_series(0, $1::int - 1) AS n`,
      [TASKS],
    );
    // The tasks' items interleaved in time, as collections running side by side store them.
    await database.query(
      `INSERT INTO task_items (task_id, uri, datetime, item, collected_at)
       SELECT 'task-' || (n % $1::int), 'https://x.com/a/status/' || n,
         timestamptz '2026-11-20T00:00:00Z' + (n / 3) * interval '1 second', '{}', now()
       FROM generate_series(1, $1::int * $2::int) AS n`,
      [TASKS, ITEMS_PER_TASK],
    );
    await database.query('ANALYZE task_items');
  });
  afterAll(() => medium.close());

  it("reads a task's first page from the index, in its order: no sort of the task's rows", async () => {
    const nodes = await planOf(null, null);
    expect(nodes.map((node) => node['Node Type'])).not.toContain('Sort');
    expect(nodes).toContainEqual(
      expect.objectContaining({
        'Node Type': 'Index Scan',
        'Index Name': 'task_items_task_order_idx',
      }),
    );
  });

  it('starts a later page in the index where the last one ended', async () => {
    const nodes = await planOf('https://x.com/a/status/3007', new Date('2026-11-20T00:16:42Z'));
    expect(nodes.map((node) => node['Node Type'])).not.toContain('Sort');
    const scan = nodes.find((node) => node['Index Name'] === 'task_items_task_order_idx');
    // The cursor bounds the scan itself, not a filter over every row before it.
    expect(scan?.['Index Cond']).toMatch(/ROW\(datetime, uri\) > ROW\(/);
  });
});

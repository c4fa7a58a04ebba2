import { DataSource } from 'typeorm';
import { TaskListFilter } from '../../src/modules/tasks/task.types';
import { TasksRepository } from '../../src/modules/tasks/tasks.repository';
import { MediumDatabase, openMediumDatabase } from '../support/medium-database';

// Tasks are never deleted (only their items), so the table only grows: 20k is a few years' worth.
const TASKS = 20_000;
const ACTIVE = 500;
const PAGE = 100;

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  'Index Cond'?: string;
  Plans?: PlanNode[];
}

/** Every node of a plan, depth first. */
function nodesOf(plan: PlanNode): PlanNode[] {
  return [plan, ...(plan.Plans ?? []).flatMap(nodesOf)];
}

/**
 * `GET /api/v1/tasks` reads a page newest registration first. With no index in that order, each
 * page read every task and sorted them (an audit measured 162 ms for the first page of 50,501
 * tasks); the indexes of migration TaskListOrderIndexes let a page read just its rows, in order,
 * with or without a state filter.
 */
describe('TasksRepository.list plan', () => {
  let medium: MediumDatabase;
  let database: DataSource;

  /**
   * The plan of the page query list runs (the first of its two), with its parameters: as the app
   * plans it (pg's unnamed statements, planned for the values bound), or with `generic` the plan
   * a prepared statement reuses for any values (plan_cache_mode, a driver's named statements).
   */
  const pagePlanOf = async (filter: TaskListFilter, generic = false): Promise<PlanNode[]> => {
    const plans: PlanNode[] = [];
    const explaining = {
      query: (sql: string, parameters: (string | number | null)[]) =>
        database.transaction(async (manager) => {
          let explain = `EXPLAIN (FORMAT JSON) ${sql}`;
          if (generic) {
            await manager.query('SET LOCAL plan_cache_mode = force_generic_plan');
            await manager.query(`PREPARE listed AS ${sql}`);
            // EXECUTE takes no bound parameters: the values as literals.
            const values = parameters.map((value) =>
              value === null
                ? 'NULL'
                : typeof value === 'number'
                  ? String(value)
                  : `'${value.replace(/'/g, "''")}'`,
            );
            explain = `EXPLAIN (FORMAT JSON) EXECUTE listed(${values.join(', ')})`;
          }
          const [row] = await manager.query<{ 'QUERY PLAN': { Plan: PlanNode }[] }[]>(
            explain,
            generic ? [] : parameters,
          );
          if (generic) await manager.query('DEALLOCATE listed');
          plans.push(row['QUERY PLAN'][0].Plan);
          return [{ count: 0 }];
        }),
    };
    const transacting = {
      transaction: (_level: string, work: (manager: unknown) => Promise<unknown>) =>
        work(explaining),
    } as unknown as DataSource;
    await new TasksRepository(transacting).list(filter, PAGE, 0);
    return nodesOf(plans[0]);
  };

  beforeAll(async () => {
    medium = await openMediumDatabase({ own: 'tasklistplan' });
    database = medium.dataSource;
    // One task every 12 minutes; the last week's still active, the rest completed.
    await database.query(
      `INSERT INTO scraping_tasks (id, platform, label, state, registered_by, registered_at,
         expires_at, completed_at)
       SELECT 'task-' || n, 'x', '#ai', CASE WHEN n > $1::int - $2::int THEN 'active' ELSE 'completed' END,
         '5Hotkey', at, at + interval '7 days',
         CASE WHEN n <= $1::int - $2::int THEN at + interval '7 days 10 minutes' END
       FROM generate_series(1, $1::int) AS n,
         LATERAL (SELECT timestamptz '2026-01-01T00:00:00Z' + n * interval '12 minutes' AS at) AS t`,
      [TASKS, ACTIVE],
    );
    await database.query('ANALYZE scraping_tasks');
  });
  afterAll(() => medium.close());

  it.each([
    ['every task', {}, ['scraping_tasks_registered_idx']],
    ['the active tasks', { state: 'active' }, ['scraping_tasks_state_registered_idx']],
    // Nearly every task: reading every task's order and skipping the others costs about the same.
    [
      'the completed tasks',
      { state: 'completed' },
      ['scraping_tasks_state_registered_idx', 'scraping_tasks_registered_idx'],
    ],
  ] as const)(
    'reads a page of %s from an index in the order listed: no scan or sort of every task',
    async (_name, filter: TaskListFilter, indexes: readonly string[]) => {
      const nodes = await pagePlanOf(filter);
      expect(nodes.map((node) => node['Node Type'])).not.toContain('Sort');
      expect(nodes.map((node) => node['Node Type'])).not.toContain('Seq Scan');
      const scan = nodes.find((node) => node['Node Type'] === 'Index Scan');
      expect(indexes).toContain(scan?.['Index Name']);
    },
  );

  it("finds a state's tasks in its index under a plan made for any state", async () => {
    const nodes = await pagePlanOf({ state: 'failed' }, true);
    expect(nodes).toContainEqual(
      expect.objectContaining({
        'Node Type': 'Index Scan',
        'Index Name': 'scraping_tasks_state_registered_idx',
        'Index Cond': expect.stringMatching(/state/),
      }),
    );
  });

  it('reads the completions after an instant from the completion index, a state or not', async () => {
    const completedAfter = new Date('2026-06-01T00:00:00Z');
    for (const filter of [{ completedAfter }, { completedAfter, state: 'completed' as const }]) {
      const nodes = await pagePlanOf(filter);
      expect(nodes.map((node) => node['Node Type'])).not.toContain('Sort');
      expect(nodes).toContainEqual(
        expect.objectContaining({ 'Index Name': 'scraping_tasks_completed_at_idx' }),
      );
    }
  });
});

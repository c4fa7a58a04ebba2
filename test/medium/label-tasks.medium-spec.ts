import { DataSource } from 'typeorm';
import { TaskLifecycleRepository } from '../../src/modules/tasks/task-lifecycle.repository';
import { TasksRepository } from '../../src/modules/tasks/tasks.repository';
import { MediumDatabase, openMediumDatabase } from '../support/medium-database';

const REGISTERED = new Date('2026-11-20T00:00:00Z');
const EXPIRES = new Date('2026-11-27T00:00:00Z');
const AFTER_EXPIRY = new Date('2026-11-28T00:00:00Z');

/**
 * Where a legacy label's generations are read (TasksRepository.findLabelTasks): the tasks of a
 * label alone, locked so that the compiler cannot claim one between the read and the vote.
 */
describe('TasksRepository.findLabelTasks', () => {
  let medium: MediumDatabase;
  let database: DataSource;
  let repository: TasksRepository;

  const insert = (id: string, platform: string, label: string, extra: string = '') =>
    database.query(
      `INSERT INTO scraping_tasks (id, platform, label, keyword, post_start, registered_by, registered_at, expires_at)
       VALUES ($1, $2, $3, ${extra.includes('keyword') ? "'subnet'" : 'NULL'},
               ${extra.includes('window') ? "'2026-11-01T00:00:00Z'" : 'NULL'}, '5Hotkey', $4, $5)`,
      [id, platform, label, REGISTERED.toISOString(), EXPIRES.toISOString()],
    );

  beforeAll(async () => {
    medium = await openMediumDatabase({ own: 'labeltasks' });
    database = medium.dataSource;
    repository = new TasksRepository(database);
    await insert('ai-alone', 'x', '#ai');
    await insert('ai-keyword', 'x', '#ai', 'keyword');
    await insert('ai-window', 'x', '#ai', 'window');
    await insert('ai-on-reddit', 'reddit', '#ai');
    await insert('bitcoin-alone', 'reddit', 'r/bitcoin');
    await insert('tao-alone', 'x', '#tao');
  });
  afterAll(() => medium.close());

  it('reads the tasks of each label alone: no keyword, no post window, that platform', async () => {
    const rows = await repository.findLabelTasks(
      [
        { platform: 'x', label: '#ai' },
        { platform: 'reddit', label: 'r/bitcoin' },
      ],
      database.manager,
    );
    expect(rows.map((row) => row.id).sort()).toEqual(['ai-alone', 'bitcoin-alone']);
    expect(await repository.findLabelTasks([], database.manager)).toEqual([]);
  });

  it("holds the compiler's claim of those tasks until the reading transaction ends", async () => {
    let claimed: string[] | undefined;
    let claim: Promise<void> | undefined;
    await database.transaction(async (manager) => {
      await repository.findLabelTasks([{ platform: 'x', label: '#ai' }], manager);
      claim = new TaskLifecycleRepository(database)
        .claimExpired(AFTER_EXPIRY, 3_600_000, 3_600_000, 86_400_000)
        .then((rows) => {
          claimed = rows.map((row) => row.id).sort();
        });
      await new Promise((resolve) => setTimeout(resolve, 500));
      // Still waiting on the lock: the label's tasks are as the transaction read them.
      expect(claimed).toBeUndefined();
      const [row] = await manager.query<{ state: string }[]>(
        `SELECT state FROM scraping_tasks WHERE id = 'ai-alone'`,
      );
      expect(row.state).toBe('active');
    });
    await claim;
    expect(claimed).toContain('ai-alone');
  });
});

import { DataSource } from 'typeorm';
import { TaskFailureReasons1764750000000 } from '../../src/database/migrations/1764750000000-TaskFailureReasons';
import { MediumDatabase, openMediumDatabase } from '../support/medium-database';

const LONG_ID = `wé ird ${'数据'.repeat(30)}`;
const TOO_LONG = `ENAMETOOLONG: name too long, open '/srv/gateway/data/datasets/${encodeURIComponent(LONG_ID)}.jsonl.gz.0b5c.partial'`;

/**
 * The migration is run again on a database of its own, over tasks as releases before it left
 * them: one failed on a name too long, one failed for another reason, one completed.
 */
describe(TaskFailureReasons1764750000000.name, () => {
  let medium: MediumDatabase;
  let database: DataSource;

  beforeAll(async () => {
    medium = await openMediumDatabase({ own: 'taskreasons' });
    database = medium.dataSource;
  });
  afterAll(() => medium.close());

  it('compiles again the tasks whose id was too long for a file name, and cuts the directories from every reason', async () => {
    const insert = (id: string, state: string, reason: string | null) =>
      database.query(
        `INSERT INTO scraping_tasks (id, platform, label, state, registered_by, registered_at, expires_at, compile_attempts, failure_reason)
         VALUES ($1, 'x', '#ai', $2, '5Hotkey', now() - interval '8 days', now() - interval '1 day', 3, $3)`,
        [id, state, reason],
      );
    await insert(LONG_ID, 'failed', TOO_LONG);
    await insert(
      'no-room',
      'failed',
      "ENOSPC: no space left on device, write '/srv/data/datasets/no-room.parquet'",
    );
    await insert('done', 'completed', null);
    const runner = database.createQueryRunner();
    try {
      await new TaskFailureReasons1764750000000().up(runner);
    } finally {
      await runner.release();
    }

    const rows = await database.query<
      { id: string; state: string; compile_attempts: number; failure_reason: string | null }[]
    >('SELECT id, state, compile_attempts, failure_reason FROM scraping_tasks ORDER BY id');
    expect(rows).toEqual([
      { id: 'done', state: 'completed', compile_attempts: 3, failure_reason: null },
      {
        id: 'no-room',
        state: 'failed',
        compile_attempts: 3,
        failure_reason: "ENOSPC: no space left on device, write 'no-room.parquet'",
      },
      {
        id: LONG_ID,
        state: 'compiling',
        compile_attempts: 0,
        failure_reason: `ENAMETOOLONG: name too long, open '${encodeURIComponent(LONG_ID)}.jsonl.gz.0b5c.partial'`,
      },
    ]);
  });
});

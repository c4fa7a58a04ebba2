import { DataSource } from 'typeorm';
import { DatasetWrittenAt1765010000000 } from '../../src/database/migrations/1765010000000-DatasetWrittenAt';
import { DatasetRecordsRepository } from '../../src/modules/tasks/dataset-records.repository';
import { TaskLifecycleRepository } from '../../src/modules/tasks/task-lifecycle.repository';
import { MediumDatabase, openMediumDatabase } from '../support/medium-database';

const SHA = (digit: string) => digit.repeat(64);
const at = (minute: number, ms = 0) => new Date(Date.UTC(2026, 11, 7, 12, minute) + ms);

/**
 * Migration 1765010000000: when a task's JSON lines file was written, its `Last-Modified` at a
 * download (docs/decisions.md, "An author's erasure"): at the compile, `completed_at`; at an
 * erasure's rewrite, the command's time, but at least the second after the file it replaces.
 */
describe('When a JSON lines dataset file was written', () => {
  let medium: MediumDatabase;
  let database: DataSource;
  let lifecycle: TaskLifecycleRepository;
  let records: DatasetRecordsRepository;

  const times = async (id: string) =>
    (
      await database.query<{ completed_at: Date; dataset_written_at: Date | null }[]>(
        'SELECT completed_at, dataset_written_at FROM scraping_tasks WHERE id = $1',
        [id],
      )
    )[0];
  const completed = async (id: string, now: Date) => {
    await database.query(
      `INSERT INTO scraping_tasks (id, platform, label, state, registered_by, registered_at, expires_at)
       VALUES ($1, 'x', '#tao', 'compiling', '5Hotkey', now() - interval '8 days', now() - interval '1 day')`,
      [id],
    );
    const dataset = {
      file: `/data/datasets/${id}.jsonl.gz`,
      rows: 2,
      bytes: 10,
      sha256: SHA('f'),
      start: null,
      end: null,
      parquet: null,
    };
    expect(await lifecycle.markCompleted(id, dataset, now)).toBe(true);
  };
  /** Records the file of SHA-256 `sha256` as the rewrite of `replaced`, at `now`. */
  const rewritten = (id: string, replaced: string, sha256: string, now: Date) =>
    records.lockTask(id, 1000, (lock) =>
      records.recordRewritten(
        id,
        replaced,
        {
          file: `/data/datasets/${id}.jsonl.gz`,
          rows: 1,
          bytes: 9,
          sha256,
          start: null,
          end: null,
        },
        now,
        lock,
      ),
    );

  beforeAll(async () => {
    medium = await openMediumDatabase({ own: 'datasetwritten' });
    database = medium.dataSource;
    lifecycle = new TaskLifecycleRepository(database);
    records = new DatasetRecordsRepository(database);
  });
  afterAll(() => medium.close());
  // Completion times only grow across the table (markCompleted): each test starts from none.
  beforeEach(() => database.query('DELETE FROM scraping_tasks'));

  it('is the completion of the compile that wrote it', async () => {
    await completed('compiled', at(0, 250));
    const written = await times('compiled');
    expect(written.dataset_written_at).toEqual(written.completed_at);
  });

  it("is the rewrite's time, at least the second after the last, and the completion stays", async () => {
    await completed('erased', at(10, 250));
    // On time: the command's now.
    expect(await rewritten('erased', SHA('f'), SHA('a'), at(20, 400))).toBe(true);
    expect(await times('erased')).toEqual({
      completed_at: at(10, 250),
      dataset_written_at: at(20, 400),
    });
    // A command whose clock is behind, then one within the same second: the next second each.
    expect(await rewritten('erased', SHA('a'), SHA('b'), at(15))).toBe(true);
    expect((await times('erased')).dataset_written_at).toEqual(at(20, 1000));
    expect(await rewritten('erased', SHA('b'), SHA('c'), at(20, 1500))).toBe(true);
    expect((await times('erased')).dataset_written_at).toEqual(at(20, 2000));
    // Not the file the task records: nothing recorded, the time as it was.
    expect(await rewritten('erased', SHA('a'), SHA('d'), at(30))).toBe(false);
    expect(await times('erased')).toEqual({
      completed_at: at(10, 250),
      dataset_written_at: at(20, 2000),
    });
  });

  it('builds on the completion for a file recorded before the migration (no time)', async () => {
    await completed('untimed', at(40, 700));
    await database.query(
      `UPDATE scraping_tasks SET dataset_written_at = NULL WHERE id = 'untimed'`,
    );
    expect(await rewritten('untimed', SHA('f'), SHA('a'), at(39))).toBe(true);
    expect((await times('untimed')).dataset_written_at).toEqual(at(40, 1000));
  });

  it('leaves the files recorded before it without a time, read as their completion', async () => {
    await completed('before', at(50));
    const migration = new DatasetWrittenAt1765010000000();
    const runner = database.createQueryRunner();
    try {
      await migration.down(runner);
      await migration.up(runner);
      expect(await times('before')).toEqual({ completed_at: at(50), dataset_written_at: null });
    } finally {
      await runner.release();
    }
  });
});

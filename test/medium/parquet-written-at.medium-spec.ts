import { DataSource, QueryRunner } from 'typeorm';
import { ParquetWrittenAt1764930000000 } from '../../src/database/migrations/1764930000000-ParquetWrittenAt';
import { TaskLifecycleRepository } from '../../src/modules/tasks/task-lifecycle.repository';
import { MediumDatabase, openMediumDatabase } from '../support/medium-database';

const SHA = (digit: string) => digit.repeat(64);
const at = (minute: number) => new Date(Date.UTC(2026, 11, 3, 12, minute));

/**
 * Migration 1764930000000: when a task's Parquet file was written, its `Last-Modified` at a
 * download (docs/decisions.md, "Scraping task lifecycle"): at the compile, `completed_at`; at a
 * download, that time, unless the file recorded is the one recorded before.
 */
describe('When a Parquet file was written', () => {
  let medium: MediumDatabase;
  let database: DataSource;
  let repository: TaskLifecycleRepository;

  const times = async (id: string) =>
    (
      await database.query<{ completed_at: Date; parquet_written_at: Date | null }[]>(
        'SELECT completed_at, parquet_written_at FROM scraping_tasks WHERE id = $1',
        [id],
      )
    )[0];
  const compiling = (id: string) =>
    database.query(
      `INSERT INTO scraping_tasks (id, platform, label, state, registered_by, registered_at, expires_at)
       VALUES ($1, 'x', '#tao', 'compiling', '5Hotkey', now() - interval '8 days', now() - interval '1 day')`,
      [id],
    );
  const dataset = (parquet: boolean) => ({
    file: '/data/datasets/tao.jsonl.gz',
    rows: 1,
    bytes: 10,
    sha256: SHA('f'),
    start: null,
    end: null,
    parquet: parquet ? { file: '/data/datasets/tao.parquet', bytes: 20, sha256: SHA('a') } : null,
  });

  beforeAll(async () => {
    medium = await openMediumDatabase({ own: 'parquetwritten' });
    database = medium.dataSource;
    repository = new TaskLifecycleRepository(database);
  });
  afterAll(() => medium.close());
  // Completion times only grow across the table (markCompleted): each test starts from none, so
  // its times are its own in any order.
  beforeEach(() => database.query('DELETE FROM scraping_tasks'));

  it('is the completion of a compile that wrote it, and none for a compile that did not', async () => {
    await compiling('with-parquet');
    await compiling('without-parquet');
    expect(await repository.markCompleted('with-parquet', dataset(true), at(0))).toBe(true);
    expect(await repository.markCompleted('without-parquet', dataset(false), at(1))).toBe(true);
    const written = await times('with-parquet');
    expect(written.parquet_written_at).toEqual(written.completed_at);
    expect((await times('without-parquet')).parquet_written_at).toBeNull();
  });

  it('moves only when a download records another file than the one recorded', async () => {
    await compiling('rewritten');
    await repository.markCompleted('rewritten', dataset(true), at(10));
    const { completed_at: completed } = await times('rewritten');
    const file = { file: '/data/datasets/tao.parquet', bytes: 20, sha256: SHA('a') };
    // The same bytes again (a file gone from the disk, written again): not modified.
    expect(await repository.recordParquet('rewritten', file, at(20), SHA('f'))).toEqual(completed);
    expect((await times('rewritten')).parquet_written_at).toEqual(completed);
    // Another file (an upgraded writer's): written now.
    const other = { ...file, sha256: SHA('b') };
    expect(await repository.recordParquet('rewritten', other, at(30), SHA('f'))).toEqual(at(30));
    expect(await repository.recordParquet('rewritten', other, at(40), SHA('f'))).toEqual(at(30));
  });

  it('moves past the date recorded when a replica whose clock is behind records other bytes', async () => {
    await compiling('behind');
    await repository.markCompleted('behind', dataset(true), at(20));
    const file = { file: '/data/datasets/tao.parquet', bytes: 20, sha256: SHA('c') };
    // Written at 12:20:00.000; a replica at 12:19 writes other bytes: the second after, as an
    // HTTP-date says whole seconds and a client may hold the first file with 12:20:00.
    const second = new Date(at(20).getTime() + 1000);
    expect(await repository.recordParquet('behind', file, at(19), SHA('f'))).toEqual(second);
    // Within the same second, by a replica on time: the next second again.
    const third = { ...file, sha256: SHA('d') };
    expect(
      await repository.recordParquet('behind', third, new Date(second.getTime() + 300), SHA('f')),
    ).toEqual(new Date(second.getTime() + 1000));
  });

  // An author's erasure rewrote the JSON lines file while a download converted the old one.
  it('is not recorded for a file made from a JSON lines file the task no longer records', async () => {
    await compiling('rewritten-meanwhile');
    await repository.markCompleted('rewritten-meanwhile', dataset(false), at(30));
    const file = { file: '/data/datasets/tao.parquet', bytes: 20, sha256: SHA('a') };
    expect(
      await repository.recordParquet('rewritten-meanwhile', file, at(31), SHA('e')),
    ).toBeNull();
    const [row] = await database.query<{ parquet_file: string | null }[]>(
      `SELECT parquet_file FROM scraping_tasks WHERE id = 'rewritten-meanwhile'`,
    );
    expect(row.parquet_file).toBeNull();
  });

  it('is the completion for the same bytes recorded without a time (a release before it)', async () => {
    await compiling('untimed');
    await repository.markCompleted('untimed', dataset(true), at(25));
    const { completed_at: completed } = await times('untimed');
    await database.query(
      `UPDATE scraping_tasks SET parquet_written_at = NULL WHERE id = 'untimed'`,
    );
    expect(
      await repository.recordParquet('untimed', dataset(true).parquet!, at(45), SHA('f')),
    ).toEqual(completed);
  });

  it("is the migration's time for a file recorded before it, and none for a task without one", async () => {
    await compiling('before-with');
    await compiling('before-without');
    await repository.markCompleted('before-with', dataset(true), at(0));
    await repository.markCompleted('before-without', dataset(false), at(1));
    const migration = new ParquetWrittenAt1764930000000();
    const runner: QueryRunner = database.createQueryRunner();
    try {
      await migration.down(runner);
      const [{ now }] = (await runner.query('SELECT now()')) as { now: Date }[];
      await migration.up(runner);
      // Later than the compile: one written again since would otherwise be a 304 for bytes the
      // client does not hold.
      const backfilled = (await times('before-with')).parquet_written_at!;
      expect(backfilled.getTime()).toBeGreaterThanOrEqual(now.getTime());
      expect(backfilled.getTime()).toBeGreaterThan(at(0).getTime());
      expect((await times('before-without')).parquet_written_at).toBeNull();
    } finally {
      await runner.release();
    }
  });

  it('is the time of the download for a file recorded without one', async () => {
    await compiling('legacy');
    await repository.markCompleted('legacy', dataset(false), at(50));
    expect(
      await repository.recordParquet('legacy', dataset(true).parquet!, at(55), SHA('f')),
    ).toEqual(at(55));
    // Not completed: nothing recorded, no time.
    await compiling('not-completed');
    expect(
      await repository.recordParquet('not-completed', dataset(true).parquet!, at(56), SHA('f')),
    ).toBe(null);
  });
});

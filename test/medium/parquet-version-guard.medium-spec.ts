import { DataSource } from 'typeorm';
import { PARQUET_VERSION } from '../../src/modules/tasks/dataset-parquet';
import { TaskLifecycleRepository } from '../../src/modules/tasks/task-lifecycle.repository';
import { MediumDatabase, openMediumDatabase } from '../support/medium-database';

const SHA = (digit: string) => digit.repeat(64);

/**
 * Migration 1764810000000: a Parquet file recorded by a release that does not know
 * `parquet_version` (its UPDATE leaves the column as it was) is not taken for the current
 * writer's, even when the current writer had just recorded its own file of the task.
 */
describe('The Parquet version guard', () => {
  let medium: MediumDatabase;
  let database: DataSource;
  let repository: TaskLifecycleRepository;

  const version = async (id: string) =>
    (
      await database.query<{ parquet_version: number | null }[]>(
        'SELECT parquet_version FROM scraping_tasks WHERE id = $1',
        [id],
      )
    )[0].parquet_version;
  /** What a release before 1764800000000 runs when it records a Parquet file it wrote. */
  const olderReleaseRecords = (id: string, sha256: string) =>
    database.query(
      `UPDATE scraping_tasks SET parquet_file = $2, parquet_bytes = $3, parquet_sha256 = $4
       WHERE id = $1 AND state = 'completed'`,
      [id, `/data/datasets/${id}.parquet`, 100, sha256],
    );

  beforeAll(async () => {
    medium = await openMediumDatabase({ own: 'parquetguard' });
    database = medium.dataSource;
    repository = new TaskLifecycleRepository(database);
    await database.query(
      `INSERT INTO scraping_tasks (id, platform, label, state, registered_by, registered_at, expires_at, completed_at, dataset_sha256)
       VALUES ('tao-x', 'x', '#tao', 'completed', '5Hotkey', now() - interval '8 days', now() - interval '1 day', now(), $1)`,
      [SHA('f')],
    );
  });
  afterAll(() => medium.close());

  it('forgets the version when an older release records its file over the current one', async () => {
    const file = '/data/datasets/tao-x.parquet';
    await repository.recordParquet(
      'tao-x',
      { file, bytes: 120, sha256: SHA('a') },
      new Date(),
      SHA('f'),
    );
    expect(await version('tao-x')).toBe(PARQUET_VERSION);

    await olderReleaseRecords('tao-x', SHA('b'));
    expect(await version('tao-x')).toBeNull();

    // Written again by the current writer: its version again.
    await repository.recordParquet(
      'tao-x',
      { file, bytes: 120, sha256: SHA('a') },
      new Date(),
      SHA('f'),
    );
    expect(await version('tao-x')).toBe(PARQUET_VERSION);
    // The same file recorded again (the writer is deterministic) keeps it.
    await olderReleaseRecords('tao-x', SHA('a'));
    expect(await version('tao-x')).toBe(PARQUET_VERSION);
  });
});

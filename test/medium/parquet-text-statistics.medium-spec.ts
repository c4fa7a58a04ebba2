import { DataSource } from 'typeorm';
import { ParquetTextStatistics1764780000000 } from '../../src/database/migrations/1764780000000-ParquetTextStatistics';
import { MediumDatabase, openMediumDatabase } from '../support/medium-database';

/**
 * The migration is run again on a database of its own, over a task whose Parquet file an earlier
 * release wrote (with text statistics readers may trust wrongly) and one that has none yet.
 */
describe(ParquetTextStatistics1764780000000.name, () => {
  let medium: MediumDatabase;
  let database: DataSource;

  beforeAll(async () => {
    medium = await openMediumDatabase({ own: 'parquetstats' });
    database = medium.dataSource;
  });
  afterAll(() => medium.close());

  it("forgets every Parquet file written so far, so the next download writes it again, and keeps the JSON lines dataset's record", async () => {
    const sha = (digit: string) => digit.repeat(64);
    const insert = (id: string, parquet: boolean) =>
      database.query(
        `INSERT INTO scraping_tasks (id, platform, label, state, registered_by, registered_at, expires_at,
           dataset_file, dataset_rows, dataset_bytes, dataset_sha256, parquet_file, parquet_bytes, parquet_sha256)
         VALUES ($1, 'x', '#ai', 'completed', '5Hotkey', now() - interval '8 days', now() - interval '1 day',
           $2, 10, 1000, $3, $4, $5, $6)`,
        [
          id,
          `/data/datasets/${id}.jsonl.gz`,
          sha('a'),
          parquet ? `/data/datasets/${id}.parquet` : null,
          parquet ? 900 : null,
          parquet ? sha('b') : null,
        ],
      );
    await insert('written', true);
    await insert('not-yet', false);
    const runner = database.createQueryRunner();
    try {
      await new ParquetTextStatistics1764780000000().up(runner);
    } finally {
      await runner.release();
    }

    const rows = await database.query<Record<string, unknown>[]>(
      `SELECT id, dataset_file, dataset_sha256, parquet_file, parquet_bytes, parquet_sha256
       FROM scraping_tasks ORDER BY id`,
    );
    expect(rows).toEqual(
      ['not-yet', 'written'].map((id) => ({
        id,
        dataset_file: `/data/datasets/${id}.jsonl.gz`,
        dataset_sha256: sha('a'),
        parquet_file: null,
        parquet_bytes: null,
        parquet_sha256: null,
      })),
    );
  });
});

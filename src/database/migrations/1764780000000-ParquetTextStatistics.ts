import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Parquet files written before their text columns lost their min/max statistics (see
 * dataset-parquet.ts) can make a reader skip rows a filter asks for. Forgetting them makes the
 * next Parquet download convert the dataset again from its JSON lines file, which stays as it
 * is: the new file replaces the old one in place, with its own size and SHA-256 in the task and
 * its manifest. Nothing to undo: a release before this one reads the columns as "not written
 * yet" and converts the same way.
 */
export class ParquetTextStatistics1764780000000 implements MigrationInterface {
  name = 'ParquetTextStatistics1764780000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      UPDATE scraping_tasks SET parquet_file = NULL, parquet_bytes = NULL, parquet_sha256 = NULL
      WHERE parquet_file IS NOT NULL`);
  }

  async down(): Promise<void> {
    // Nothing: the files are rewritten on demand, whichever release asks.
  }
}

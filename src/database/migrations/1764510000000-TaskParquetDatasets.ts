import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A completed task's dataset as Parquet, beside its JSON lines file. Null until the Parquet file
 * exists: tasks completed before this migration get theirs at their first Parquet download.
 */
export class TaskParquetDatasets1764510000000 implements MigrationInterface {
  name = 'TaskParquetDatasets1764510000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      ALTER TABLE scraping_tasks
        ADD COLUMN parquet_file text,
        ADD COLUMN parquet_bytes bigint,
        ADD COLUMN parquet_sha256 char(64)`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      ALTER TABLE scraping_tasks
        DROP COLUMN parquet_file,
        DROP COLUMN parquet_bytes,
        DROP COLUMN parquet_sha256`);
  }
}

import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Which writer made a task's Parquet file (`PARQUET_VERSION`): a file made by an earlier writer
 * is written again at its next download. Needed because a release before this one, still running
 * in a rolling upgrade, writes Parquet files with its own writer after the new release's
 * migrations ran (found by an upgrade audit: an old replica wrote back, and recorded, files with
 * the text statistics migration 1764780000000 had forgotten). Null for every file written so far:
 * each is written again once, at its next download. Added without a default: a release before it
 * ignores it, so a rolling upgrade works.
 */
export class ParquetVersion1764800000000 implements MigrationInterface {
  name = 'ParquetVersion1764800000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE scraping_tasks ADD COLUMN parquet_version smallint');
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE scraping_tasks DROP COLUMN parquet_version');
  }
}

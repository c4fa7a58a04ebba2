import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A Parquet file recorded without its writer's version is not taken for the current writer's.
 * A release before 1764800000000, still running in a rolling upgrade, records the files it
 * writes with an UPDATE that leaves `parquet_version` as it was: had the new release recorded its
 * own file of the task just before (both converting at once), the row would say "current writer"
 * over the old writer's file (found by a review). This trigger forgets the version whenever the
 * recorded file changes and the statement does not set a new version; the file is then written
 * again at its next download. The new release always sets the version with the file.
 */
export class ParquetVersionGuard1764810000000 implements MigrationInterface {
  name = 'ParquetVersionGuard1764810000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE FUNCTION scraping_tasks_parquet_version_guard() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.parquet_sha256 IS DISTINCT FROM OLD.parquet_sha256
           AND NEW.parquet_version IS NOT DISTINCT FROM OLD.parquet_version THEN
          NEW.parquet_version := NULL;
        END IF;
        RETURN NEW;
      END $$`);
    await queryRunner.query(`
      CREATE TRIGGER scraping_tasks_parquet_version_guard
        BEFORE UPDATE OF parquet_sha256 ON scraping_tasks
        FOR EACH ROW EXECUTE FUNCTION scraping_tasks_parquet_version_guard()`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TRIGGER scraping_tasks_parquet_version_guard ON scraping_tasks');
    await queryRunner.query('DROP FUNCTION scraping_tasks_parquet_version_guard()');
  }
}

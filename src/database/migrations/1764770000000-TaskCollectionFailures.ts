import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Failed collections in a row, and when the last one failed: a task whose collection fails
 * waits a backoff before the next try (TaskLifecycleService) instead of being tried at every
 * tick ahead of the tasks that can be collected. Added with defaults: a release before it
 * ignores them, so a rolling upgrade works.
 */
export class TaskCollectionFailures1764770000000 implements MigrationInterface {
  name = 'TaskCollectionFailures1764770000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      ALTER TABLE scraping_tasks
        ADD COLUMN collect_failures integer NOT NULL DEFAULT 0,
        ADD COLUMN collect_failed_at timestamptz`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      'ALTER TABLE scraping_tasks DROP COLUMN collect_failures, DROP COLUMN collect_failed_at',
    );
  }
}

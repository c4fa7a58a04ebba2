import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * When a task's last compile failed: a task whose compile failed waits a backoff before the
 * next attempt (TaskLifecycleService) instead of being compiled again at every tick, so that its
 * attempts span hours rather than minutes. Added nullable: a release before it ignores it, so a
 * rolling upgrade works.
 */
export class TaskCompileFailures1764830000000 implements MigrationInterface {
  name = 'TaskCompileFailures1764830000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE scraping_tasks ADD COLUMN compile_failed_at timestamptz');
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE scraping_tasks DROP COLUMN compile_failed_at');
  }
}

import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The task list's `completed_after` filter reads completed tasks in the order they completed: an
 * index of completed tasks only, so that a poll every minute reads what is new, not the table.
 * Only an index: a release before it ignores it, so a rolling upgrade works.
 */
export class TaskCompletedAtIndex1764790000000 implements MigrationInterface {
  name = 'TaskCompletedAtIndex1764790000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE INDEX scraping_tasks_completed_at_idx ON scraping_tasks (completed_at, id)
        WHERE completed_at IS NOT NULL`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP INDEX scraping_tasks_completed_at_idx');
  }
}

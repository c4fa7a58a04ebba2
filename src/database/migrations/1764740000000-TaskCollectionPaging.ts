import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Where each task's collection has got to (src/modules/tasks/collection-paging.ts): collections
 * page back through a task's window instead of asking for its newest items every time. Existing
 * tasks start from nothing: their next collection is a newest-first page, as before.
 */
export class TaskCollectionPaging1764740000000 implements MigrationInterface {
  name = 'TaskCollectionPaging1764740000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      ALTER TABLE scraping_tasks
        ADD COLUMN collect_head timestamptz,
        ADD COLUMN collect_cursor timestamptz,
        ADD COLUMN collect_floor timestamptz,
        ADD COLUMN collect_back_next boolean NOT NULL DEFAULT false`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      ALTER TABLE scraping_tasks
        DROP COLUMN collect_head, DROP COLUMN collect_cursor,
        DROP COLUMN collect_floor, DROP COLUMN collect_back_next`);
  }
}

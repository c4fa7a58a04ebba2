import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A compile reads a task's items a page at a time in dataset order, (datetime, uri) after the
 * last page's end (TaskLifecycleRepository.itemsPage). With the primary key (task_id, uri)
 * alone, each page read and sorted every row of the task: a 170k-row task took 113.6 s to read,
 * 6.5 s with this index (an audit's finding). Only an index: a release before it ignores it, so
 * a rolling upgrade works.
 *
 * Built in the migration's transaction, not CONCURRENTLY: a concurrent build waits for every
 * older transaction, among them a replica's wait for the migration lock, which waits for this
 * build (docs/decisions.md, "Scraping task lifecycle").
 */
export class TaskItemsOrderIndex1764970000000 implements MigrationInterface {
  name = 'TaskItemsOrderIndex1764970000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      'CREATE INDEX task_items_task_order_idx ON task_items (task_id, datetime, uri)',
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP INDEX task_items_task_order_idx');
  }
}

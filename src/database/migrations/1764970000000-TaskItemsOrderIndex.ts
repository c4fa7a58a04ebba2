import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A compile reads a task's items a page at a time in dataset order, (datetime, uri) after the
 * last page's end (TaskLifecycleRepository.itemsPage). With the primary key (task_id, uri)
 * alone, each page read and sorted every row of the task: a 170k-row task took 113.6 s to read,
 * 6.5 s with this index (an audit's finding). Only an index: a release before it ignores it, so
 * a rolling upgrade works.
 *
 * Built CONCURRENTLY, outside a transaction (`transaction = false`): task_items is the largest
 * table the collections write, and a plain CREATE INDEX would hold the old replicas' inserts
 * for the whole build (docs/decisions.md, "Scraping task lifecycle"). A build that failed
 * half-way leaves an invalid index of this name, which IF NOT EXISTS would keep: dropped first.
 */
export class TaskItemsOrderIndex1764970000000 implements MigrationInterface {
  name = 'TaskItemsOrderIndex1764970000000';
  transaction = false;

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP INDEX CONCURRENTLY IF EXISTS task_items_task_order_idx');
    await queryRunner.query(`
      CREATE INDEX CONCURRENTLY task_items_task_order_idx ON task_items (task_id, datetime, uri)`);
  }

  // Not CONCURRENTLY: a revert (`npm run migration:revert`) runs in a transaction whatever the
  // migration says, and dropping an index is quick.
  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP INDEX task_items_task_order_idx');
  }
}

import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The task list (TasksRepository.list) reads a page newest registration first, `registered_at
 * DESC, id`, with or without a state filter. With no index in that order each page read and
 * sorted every task, and tasks are never deleted: the first page of 50,501 tasks read all 2,632
 * of the table's pages, 97 with these (an audit's finding). One index per form: a state's tasks
 * are not a range of the unfiltered order. Only indexes: a release before them ignores them, so a
 * rolling upgrade works.
 *
 * Built in the migration's transaction, not CONCURRENTLY, for the reason TaskItemsOrderIndex
 * gives (docs/decisions.md, "Scraping task lifecycle").
 */
export class TaskListOrderIndexes1764980000000 implements MigrationInterface {
  name = 'TaskListOrderIndexes1764980000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      'CREATE INDEX scraping_tasks_registered_idx ON scraping_tasks (registered_at DESC, id)',
    );
    await queryRunner.query(
      'CREATE INDEX scraping_tasks_state_registered_idx ON scraping_tasks (state, registered_at DESC, id)',
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP INDEX scraping_tasks_state_registered_idx');
    await queryRunner.query('DROP INDEX scraping_tasks_registered_idx');
  }
}

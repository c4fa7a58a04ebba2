import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A legacy label's generations are found by label among the tasks of a label alone (no keyword,
 * no post window), under the registration lock: an index of those tasks only, so that a
 * submission reads its labels' tasks, not the table. Only an index: a release before it
 * ignores it, so a rolling upgrade works.
 */
export class LabelTaskIndex1764820000000 implements MigrationInterface {
  name = 'LabelTaskIndex1764820000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE INDEX scraping_tasks_label_idx ON scraping_tasks (platform, label)
        WHERE keyword IS NULL AND post_start IS NULL AND post_end IS NULL`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP INDEX scraping_tasks_label_idx');
  }
}

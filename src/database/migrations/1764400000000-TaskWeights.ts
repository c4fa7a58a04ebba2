import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A task's weight in its registrant's current vote (0 once dropped from it): collection goes
 * heaviest first when the collection budget cannot cover every due task.
 */
export class TaskWeights1764400000000 implements MigrationInterface {
  name = 'TaskWeights1764400000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      'ALTER TABLE scraping_tasks ADD COLUMN weight double precision NOT NULL DEFAULT 0',
    );
    // Today's votes give today's weights.
    await queryRunner.query(`
      UPDATE scraping_tasks t SET weight = j.weight
      FROM desirability_votes v, jsonb_to_recordset(v.jobs) AS j(id text, weight double precision)
      WHERE j.id = t.id`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE scraping_tasks DROP COLUMN weight');
  }
}

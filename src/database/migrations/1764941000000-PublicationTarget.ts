import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Where a vote's publication was being made: `<GRAVITY_REPO_URL>#<GRAVITY_BRANCH> on netuid
 * <NETUID>`. At start the row's progress (its SHA, block, failures and their wait) counts only
 * for that target: another one starts the publication afresh (docs/decisions.md, "Publishing
 * the vote to the network"). Null for a row written before it: unknown, recorded at the next
 * start and left as it is. A nullable column: a release before it ignores it, so a rolling
 * upgrade works.
 */
export class PublicationTarget1764941000000 implements MigrationInterface {
  name = 'PublicationTarget1764941000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE desirability_publications ADD COLUMN target text');
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE desirability_publications DROP COLUMN target');
  }
}

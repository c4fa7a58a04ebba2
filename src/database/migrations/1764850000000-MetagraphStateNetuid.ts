import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The netuid of the last metagraph applied: a read of another subnet (NETUID changed) is not
 * judged against the stored one's neurons. Null for a row written before it (unknown). A
 * nullable column: a release before it ignores it, so a rolling upgrade works.
 */
export class MetagraphStateNetuid1764850000000 implements MigrationInterface {
  name = 'MetagraphStateNetuid1764850000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE metagraph_state ADD COLUMN netuid integer');
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE metagraph_state DROP COLUMN netuid');
  }
}

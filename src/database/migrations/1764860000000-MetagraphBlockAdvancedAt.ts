import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * When the stored metagraph's block last advanced: a node stuck at one block keeps being read
 * (read_at moves) while its block does not, and health must see that. A row stored before it
 * starts from its read time. A nullable column: a release before it ignores it, so a rolling
 * upgrade works.
 */
export class MetagraphBlockAdvancedAt1764860000000 implements MigrationInterface {
  name = 'MetagraphBlockAdvancedAt1764860000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE metagraph_state ADD COLUMN block_advanced_at timestamptz');
    await queryRunner.query('UPDATE metagraph_state SET block_advanced_at = read_at');
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE metagraph_state DROP COLUMN block_advanced_at');
  }
}

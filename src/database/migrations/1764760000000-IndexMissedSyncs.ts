import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * How many index syncs in a row a miner has missed by its own fault (a failed call, a rejected
 * index): what decides when its index stops counting. The age of its last successful sync
 * could not tell a miner that stopped answering from a gateway that was down. Existing miners
 * start at 0: each keeps its index for the full count from now on.
 */
export class IndexMissedSyncs1764760000000 implements MigrationInterface {
  name = 'IndexMissedSyncs1764760000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      'ALTER TABLE miners ADD COLUMN index_missed_syncs smallint NOT NULL DEFAULT 0',
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE miners DROP COLUMN index_missed_syncs');
  }
}

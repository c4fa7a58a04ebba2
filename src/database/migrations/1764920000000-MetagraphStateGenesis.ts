import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The genesis hash of the chain a node's metagraph read came from: blocks are compared only
 * between reads of the same chain (a reset testnet or local node starts again at block 0). Null
 * for a file's metagraph and for a row written before it (unknown: not compared). A nullable
 * column: a release before it ignores it, so a rolling upgrade works.
 */
export class MetagraphStateGenesis1764920000000 implements MigrationInterface {
  name = 'MetagraphStateGenesis1764920000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE metagraph_state ADD COLUMN genesis_hash varchar(66)');
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE metagraph_state DROP COLUMN genesis_hash');
  }
}

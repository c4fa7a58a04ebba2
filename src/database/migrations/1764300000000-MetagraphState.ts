import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The last metagraph applied: where it came from, the block it was read at and when. It
 * outlives restarts with the miners table, so a gateway whose chain node is down at start
 * serves the last good metagraph and can say how old it is.
 */
export class MetagraphState1764300000000 implements MigrationInterface {
  name = 'MetagraphState1764300000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE metagraph_state (
        id smallint PRIMARY KEY DEFAULT 1 CHECK (id = 1),
        network varchar(16) NOT NULL CHECK (network IN ('subtensor', 'file', 'devnet')),
        source varchar(256) NOT NULL,
        block bigint NOT NULL,
        neurons integer NOT NULL,
        read_at timestamptz NOT NULL
      )`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TABLE metagraph_state');
  }
}

import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Reading the network's votes. `gravity_files`: a validator's preferences file at a committed
 * SHA, fetched once (a commit never changes; `content` null: the commit has no such file).
 * `network_desirabilities`: the last good network aggregate (one row), served while the chain
 * or the repository is out of reach.
 */
export class NetworkDesirabilities1764720000000 implements MigrationInterface {
  name = 'NetworkDesirabilities1764720000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE gravity_files (
        hotkey text NOT NULL,
        sha char(40) NOT NULL,
        content text,
        fetched_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (hotkey, sha)
      )`);
    await queryRunner.query(`
      CREATE TABLE network_desirabilities (
        id smallint PRIMARY KEY DEFAULT 1 CHECK (id = 1),
        computed_at timestamptz NOT NULL,
        block integer,
        jobs jsonb NOT NULL,
        validators jsonb NOT NULL,
        skipped jsonb NOT NULL
      )`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TABLE network_desirabilities');
    await queryRunner.query('DROP TABLE gravity_files');
  }
}

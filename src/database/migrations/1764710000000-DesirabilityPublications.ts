import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Publishing a validator's vote to the network (issue 18) as a durable job: one row per hotkey
 * holding its newest vote's file and how far its publication got (pushed to the Gravity
 * repository, then committed on chain). A newer vote replaces the row's content and restarts
 * it; `version` tells a worker that the vote it was publishing has been replaced. And each task
 * records the block its vote was committed in: when it was registered on the network.
 */
export class DesirabilityPublications1764710000000 implements MigrationInterface {
  name = 'DesirabilityPublications1764710000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE desirability_publications (
        hotkey varchar(64) PRIMARY KEY,
        state varchar(16) NOT NULL CHECK (state IN ('pending', 'pushed', 'committed', 'failed')),
        version integer NOT NULL,
        content text NOT NULL,
        task_ids text[] NOT NULL,
        voted_at timestamptz NOT NULL,
        attempts integer NOT NULL DEFAULT 0,
        next_attempt_at timestamptz NOT NULL,
        claimed_by varchar(64),
        claimed_until timestamptz,
        commit_sha char(40),
        pushed_at timestamptz,
        block_number bigint,
        block_hash char(66),
        committed_at timestamptz,
        last_error text,
        updated_at timestamptz NOT NULL
      )`);
    await queryRunner.query(`
      ALTER TABLE scraping_tasks
        ADD COLUMN network_block bigint,
        ADD COLUMN network_registered_at timestamptz,
        ADD COLUMN network_commit_sha char(40)`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      ALTER TABLE scraping_tasks
        DROP COLUMN network_block,
        DROP COLUMN network_registered_at,
        DROP COLUMN network_commit_sha`);
    await queryRunner.query('DROP TABLE desirability_publications');
  }
}

import { MigrationInterface, QueryRunner } from 'typeorm';

/** Validators' desirability votes and the scraping tasks their jobs register on the network. */
export class ScrapingTasks1764000000000 implements MigrationInterface {
  name = 'ScrapingTasks1764000000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    // A validator's current vote: as submitted (unscaled; json keeps it byte for byte) and
    // normalized into jobs.
    await queryRunner.query(`
      CREATE TABLE desirability_votes (
        hotkey varchar(64) PRIMARY KEY,
        submitted json NOT NULL,
        jobs jsonb NOT NULL,
        submitted_at timestamptz NOT NULL
      )`);
    await queryRunner.query(`
      CREATE TABLE scraping_tasks (
        id varchar(80) PRIMARY KEY,
        platform varchar(8) NOT NULL CHECK (platform IN ('x', 'reddit')),
        label varchar(140),
        keyword varchar(140),
        post_start timestamptz,
        post_end timestamptz,
        state varchar(16) NOT NULL DEFAULT 'active' CHECK (state IN ('active', 'compiling', 'completed', 'failed')),
        registered_by varchar(64) NOT NULL,
        registered_at timestamptz NOT NULL,
        expires_at timestamptz NOT NULL,
        items_collected integer NOT NULL DEFAULT 0,
        collections integer NOT NULL DEFAULT 0,
        last_collected_at timestamptz,
        compile_attempts integer NOT NULL DEFAULT 0,
        completed_at timestamptz,
        failure_reason text,
        dataset_file text,
        dataset_rows integer,
        dataset_bytes bigint,
        dataset_sha256 char(64),
        data_start timestamptz,
        data_end timestamptz,
        CHECK (label IS NOT NULL OR keyword IS NOT NULL)
      )`);
    await queryRunner.query(
      `CREATE INDEX scraping_tasks_state_idx ON scraping_tasks (state, expires_at)`,
    );
    await queryRunner.query(`
      CREATE TABLE task_items (
        task_id varchar(80) NOT NULL REFERENCES scraping_tasks (id) ON DELETE CASCADE,
        uri text NOT NULL,
        datetime timestamptz NOT NULL,
        item jsonb NOT NULL,
        collected_at timestamptz NOT NULL,
        PRIMARY KEY (task_id, uri)
      )`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TABLE task_items');
    await queryRunner.query('DROP TABLE scraping_tasks');
    await queryRunner.query('DROP TABLE desirability_votes');
  }
}

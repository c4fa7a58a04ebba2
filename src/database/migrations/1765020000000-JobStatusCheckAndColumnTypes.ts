import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Three small alignments from a schema audit (docs/decisions.md, "Start-up"):
 *
 * - `metagraph_state.source` becomes `text`: it holds `file <METAGRAPH_FILE>` or
 *   `subtensor <address> netuid N`, neither bounded, and a path or address past about 250
 *   characters failed every metagraph sync (22001, the whole transaction rolled back). varchar to
 *   text rewrites nothing.
 * - `job_runs.status` gets the CHECK every other state column has, with the values JobLock and
 *   the table's default write (`idle`, `running`, `succeeded`, `failed`, `interrupted`); every
 *   release wrote only those.
 * - `gravity_files.hotkey` becomes `varchar(64)`, as every other hotkey is. The table is a cache
 *   of files fetched from the Gravity repository by chain hotkeys (SS58, 48 characters); a row
 *   with a longer one, which no release could write, would only be fetched again, so it is
 *   deleted rather than left to fail the change. Its rewrite is one copy of a small table.
 *
 * `network_desirabilities.block` stays `integer`, unlike every other block column: as `bigint`
 * it would reach a release before this one as a string (node-postgres reads int8 as text), and
 * its replicas would answer the aggregate's `block` as `"4200"` during a rolling upgrade; 2^31
 * blocks of 12 s are some 800 years away.
 *
 * A release before this one writes only values the new types and CHECK take, and reads them as
 * it did, so a rolling upgrade works. `down` restores the old types; a `source` longer than 256
 * characters (which the old release could not store either) is cut to 256.
 */
export class JobStatusCheckAndColumnTypes1765020000000 implements MigrationInterface {
  name = 'JobStatusCheckAndColumnTypes1765020000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE metagraph_state ALTER COLUMN source TYPE text');
    await queryRunner.query(`
      ALTER TABLE job_runs ADD CONSTRAINT job_runs_status_check
        CHECK (status IN ('idle', 'running', 'succeeded', 'failed', 'interrupted'))`);
    await queryRunner.query('DELETE FROM gravity_files WHERE length(hotkey) > 64');
    await queryRunner.query('ALTER TABLE gravity_files ALTER COLUMN hotkey TYPE varchar(64)');
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE gravity_files ALTER COLUMN hotkey TYPE text');
    await queryRunner.query('ALTER TABLE job_runs DROP CONSTRAINT job_runs_status_check');
    await queryRunner.query(
      'ALTER TABLE metagraph_state ALTER COLUMN source TYPE varchar(256) USING left(source, 256)',
    );
  }
}

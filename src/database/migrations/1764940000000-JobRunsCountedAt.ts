import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The start of a job's last run that counts for its interval (docs/decisions.md, "Schedule"):
 * a run may now end without counting (a failed read of the chain, an index sync that could call
 * no miner), and the job stays due after it while its row still says how it ended. Filled with
 * what the due check counted from before: a succeeded or failed run's start, else the last
 * finished run's end. A release before it ignores the column and counts as it did; until every
 * replica runs this one, a run ended by such a release leaves the column behind, and the job may
 * run once early on a replica of this release.
 */
export class JobRunsCountedAt1764940000000 implements MigrationInterface {
  name = 'JobRunsCountedAt1764940000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE job_runs ADD COLUMN counted_at timestamptz');
    await queryRunner.query(
      `UPDATE job_runs
       SET counted_at = CASE WHEN status IN ('succeeded', 'failed') THEN started_at ELSE finished_at END`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE job_runs DROP COLUMN counted_at');
  }
}

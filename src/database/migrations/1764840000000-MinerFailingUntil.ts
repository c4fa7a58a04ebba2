import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A miner's `failing` state lasts its circuit's cooldown (`failing_until`), as the circuit it
 * mirrors does: only the breaker that wrote it could clear it, so after a restart, or on another
 * replica, a miner stayed failing for good and was never asked for stored data again. The rows
 * failing now were written without an end: no breaker is left that would clear them. A release
 * before this one ignores the column, and the state it writes without one is read as expired.
 *
 * `down` makes the failing miners active too, as `up` does: the release before this one clears
 * a `failing` state only through the breaker that wrote it, so a row left failing by a revert
 * (with its end dropped) would stay failing for good, the bug this migration fixed.
 */
export class MinerFailingUntil1764840000000 implements MigrationInterface {
  name = 'MinerFailingUntil1764840000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE miners ADD COLUMN failing_until timestamptz');
    await queryRunner.query(`UPDATE miners SET state = 'active' WHERE state = 'failing'`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`UPDATE miners SET state = 'active' WHERE state = 'failing'`);
    await queryRunner.query('ALTER TABLE miners DROP COLUMN failing_until');
  }
}

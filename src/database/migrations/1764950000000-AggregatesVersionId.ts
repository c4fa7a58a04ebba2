import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The statistics' version that never repeats: `version_id`, a random uuid renewed by a trigger
 * at every UPDATE of the row. The counter `version` went back with a database restored from a
 * backup, and the next write gave a value again that had named other totals before the restore,
 * so a client holding a tag of it was sent a 304 for data it did not hold (docs/decisions.md,
 * "Miner index and statistics"). A restore writes the row back by INSERT (no trigger fires) with
 * the uuid that named the restored totals, and every write after it draws a new one. A trigger,
 * not the writers: a release before this one, still running in a rolling upgrade, bumps the
 * counter alone, and the uuid moves with it. The counter stays, bumped as before, so that
 * release (and a revert) keep working.
 */
export class AggregatesVersionId1764950000000 implements MigrationInterface {
  name = 'AggregatesVersionId1764950000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      'ALTER TABLE aggregates_version ADD COLUMN version_id uuid NOT NULL DEFAULT gen_random_uuid()',
    );
    await queryRunner.query(`
      CREATE FUNCTION aggregates_version_renew() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        NEW.version_id := gen_random_uuid();
        RETURN NEW;
      END $$`);
    await queryRunner.query(`
      CREATE TRIGGER aggregates_version_renew BEFORE UPDATE ON aggregates_version
        FOR EACH ROW EXECUTE FUNCTION aggregates_version_renew()`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TRIGGER aggregates_version_renew ON aggregates_version');
    await queryRunner.query('DROP FUNCTION aggregates_version_renew()');
    await queryRunner.query('ALTER TABLE aggregates_version DROP COLUMN version_id');
  }
}

import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Each miner's per-label totals as one row of parallel arrays instead of one row per label:
 * an index replace writes (and reads back) one row instead of inserting and deleting ~10 k rows
 * and their primary-key entries. `miner_label_totals` stays, as a view with the old columns, so
 * readers (credibility propagation, tests) are unchanged.
 */
export class MinerLabelArrays1764150000000 implements MigrationInterface {
  name = 'MinerLabelArrays1764150000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    // Element i of each array is one (source, label id, bytes) of the miner.
    await queryRunner.query(`
      CREATE TABLE miner_label_arrays (
        miner_uid integer PRIMARY KEY,
        sources smallint[] NOT NULL,
        label_ids integer[] NOT NULL,
        bytes bigint[] NOT NULL
      )`);
    // Out of line but uncompressed: the arrays (~100 kB a miner) are written on every replace,
    // and compressing them costs more CPU than the little disk it saves.
    for (const column of ['sources', 'label_ids', 'bytes']) {
      await queryRunner.query(
        `ALTER TABLE miner_label_arrays ALTER COLUMN ${column} SET STORAGE EXTERNAL`,
      );
    }
    await queryRunner.query(`
      INSERT INTO miner_label_arrays (miner_uid, sources, label_ids, bytes)
      SELECT miner_uid, array_agg(source ORDER BY source, label_id),
             array_agg(label_id ORDER BY source, label_id), array_agg(bytes ORDER BY source, label_id)
      FROM miner_label_totals GROUP BY miner_uid`);
    await queryRunner.query('DROP TABLE miner_label_totals');
    await queryRunner.query(`
      CREATE VIEW miner_label_totals AS
      SELECT a.miner_uid, t.source, t.label_id, t.bytes
      FROM miner_label_arrays a CROSS JOIN LATERAL unnest(a.sources, a.label_ids, a.bytes) AS t(source, label_id, bytes)`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER VIEW miner_label_totals RENAME TO miner_label_totals_view');
    await queryRunner.query(`
      CREATE TABLE miner_label_totals (
        miner_uid integer NOT NULL,
        source smallint NOT NULL,
        label_id integer NOT NULL,
        bytes bigint NOT NULL,
        PRIMARY KEY (miner_uid, source, label_id)
      )`);
    await queryRunner.query('INSERT INTO miner_label_totals SELECT * FROM miner_label_totals_view');
    await queryRunner.query('DROP VIEW miner_label_totals_view');
    await queryRunner.query('DROP TABLE miner_label_arrays');
  }
}

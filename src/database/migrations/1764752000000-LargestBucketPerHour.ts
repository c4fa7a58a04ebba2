import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Each miner's largest bucket per (source, hour), kept beside its bytes for that hour: what
 * query_bucket without a label fetches. Found through the index it cost a read of every row of
 * each holder's partition (the lookup index leads with the label), seconds per request at the
 * subnet's index sizes. Existing rows are filled from the index, one miner at a time, so each
 * statement reads and sorts one partition.
 */
export class LargestBucketPerHour1764752000000 implements MigrationInterface {
  name = 'LargestBucketPerHour1764752000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    // NULL label: the hour's largest bucket is the miner's unlabeled data.
    await queryRunner.query(`
      ALTER TABLE miner_bucket_totals
        ADD COLUMN largest_label_id integer,
        ADD COLUMN largest_bytes bigint NOT NULL DEFAULT 0`);
    const miners = (await queryRunner.query(
      'SELECT DISTINCT miner_uid FROM miner_bucket_totals ORDER BY 1',
    )) as { miner_uid: number }[];
    for (const { miner_uid: uid } of miners) {
      await queryRunner.query(
        `UPDATE miner_bucket_totals t SET largest_label_id = l.label_id, largest_bytes = l.content_size_bytes
         FROM (SELECT DISTINCT ON (source, time_bucket) source, time_bucket, label_id, content_size_bytes
               FROM miner_index WHERE miner_uid = $1
               ORDER BY source, time_bucket, content_size_bytes DESC, label_id NULLS LAST) AS l
         WHERE t.miner_uid = $1 AND t.source = l.source AND t.time_bucket = l.time_bucket`,
        [uid],
      );
    }
    // Every writer sets it from now on.
    await queryRunner.query(
      'ALTER TABLE miner_bucket_totals ALTER COLUMN largest_bytes DROP DEFAULT',
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      'ALTER TABLE miner_bucket_totals DROP COLUMN largest_label_id, DROP COLUMN largest_bytes',
    );
  }
}

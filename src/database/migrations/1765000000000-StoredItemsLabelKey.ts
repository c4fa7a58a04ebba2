import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Stored items keyed by their label too: one row per (source, uri, hour, label) instead of
 * (source, uri, hour). The first copy of a post stored in an hour held the post's row, so a
 * hostile miner that filed real posts under another label (another hashtag moved first) and was
 * fetched first kept the honest copies out of the store, and the posts out of their own label's
 * answers for that hour (a hostile-miner audit's finding). Each label now has its own row, and
 * a copy corroborates only copies filed under the same label (it already did). `label` is
 * nullable (items filed under no label), so the key is a unique constraint with NULLS NOT
 * DISTINCT rather than a primary key; it holds the partition key, as Postgres requires.
 *
 * Building it indexes every partition under the table's lock. An older release's inserts name
 * the old key in ON CONFLICT, which no longer exists: this upgrade is stop-then-start (README,
 * "Upgrading").
 */
export class StoredItemsLabelKey1765000000000 implements MigrationInterface {
  name = 'StoredItemsLabelKey1765000000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE stored_items DROP CONSTRAINT stored_items_pkey');
    await queryRunner.query(
      `ALTER TABLE stored_items ADD CONSTRAINT stored_items_key
         UNIQUE NULLS NOT DISTINCT (source, uri, time_bucket, label)`,
    );
  }

  /**
   * Back to one row per (source, uri, hour): of a post's rows in an hour, the one stored first
   * stays (the row the older release would have kept), the others are deleted. Rows of one hour
   * share a partition, where `ctid` breaks a tie of fetch times.
   */
  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      DELETE FROM stored_items AS s
      USING stored_items AS kept
      WHERE kept.source = s.source AND kept.uri = s.uri AND kept.time_bucket = s.time_bucket
        AND (kept.first_fetched_at, kept.ctid) < (s.first_fetched_at, s.ctid)`);
    await queryRunner.query('ALTER TABLE stored_items DROP CONSTRAINT stored_items_key');
    await queryRunner.query('ALTER TABLE stored_items ADD PRIMARY KEY (source, uri, time_bucket)');
  }
}

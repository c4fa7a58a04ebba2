import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The item store (issue 17): every item fetched from miners' stored data, one row per (source,
 * uri, hour), shared by every replica, and what was fetched of each bucket from each miner. It
 * replaces `bucket_fetches`, which kept a fetch's items as one JSON array: its rows are moved
 * into the new tables here, not lost.
 *
 * `stored_items` is partitioned by day on `time_bucket` (whole hours since the epoch; a day is
 * [24·d, 24·d + 24)), so the 30-day retention drops whole partitions instead of deleting rows.
 * Partitions are named `stored_items_YYYYMMDD` and created on demand by ItemStoreRepository;
 * this migration creates those its moved rows need, with the same name and bounds.
 */
export class ItemStore1764600000000 implements MigrationInterface {
  name = 'ItemStore1764600000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    // The key holds the hour because Postgres wants the partition key in every unique key; an
    // honest item's time is fixed by its record, so (source, uri) alone is unique in practice
    // (docs/decisions.md, "The item store", for two miners that disagree on an item's hour).
    await queryRunner.query(`
      CREATE TABLE stored_items (
        source smallint NOT NULL,
        uri text NOT NULL,
        time_bucket integer NOT NULL,
        datetime timestamptz NOT NULL,
        label varchar(140),
        -- Lower-cased, without '@': what the username filter compares.
        username text NOT NULL,
        item jsonb NOT NULL,
        content_bytes integer NOT NULL,
        delivered_by text[] NOT NULL,
        first_fetched_at timestamptz NOT NULL,
        last_fetched_at timestamptz NOT NULL,
        PRIMARY KEY (source, uri, time_bucket)
      ) PARTITION BY RANGE (time_bucket)`);
    // One index per way `find` narrows a source's items, each in its order (newest first, uri as
    // the tie-break of the keyset), so a page is the head of one index range per partition
    // (merged), never a sort: by label, by any label, by author.
    await queryRunner.query(
      'CREATE INDEX stored_items_label ON stored_items (source, label, datetime DESC, uri DESC)',
    );
    await queryRunner.query(
      'CREATE INDEX stored_items_time ON stored_items (source, datetime DESC, uri DESC)',
    );
    await queryRunner.query(
      'CREATE INDEX stored_items_username ON stored_items (source, username, datetime DESC, uri DESC)',
    );

    // The newest fetch of each bucket from each miner; a null label is a bucket of its own.
    await queryRunner.query(`
      CREATE TABLE stored_bucket_fetches (
        source smallint NOT NULL,
        label varchar(140),
        time_bucket integer NOT NULL,
        miner_hotkey varchar(64) NOT NULL,
        miner_uid integer NOT NULL,
        fetched_at timestamptz NOT NULL,
        claimed_bytes bigint NOT NULL,
        item_count integer NOT NULL,
        bytes bigint NOT NULL,
        CONSTRAINT stored_bucket_fetches_key
          UNIQUE NULLS NOT DISTINCT (source, label, time_bucket, miner_hotkey)
      )`);
    await queryRunner.query(
      'CREATE INDEX stored_bucket_fetches_hour ON stored_bucket_fetches (time_bucket)',
    );

    await this.moveOldFetches(queryRunner);
    await queryRunner.query('DROP TABLE bucket_fetches');
  }

  /**
   * bucket_fetches kept the checked items of each fetch but not the byte size of the record
   * each was read from: a moved item's content_bytes is the byte length of its item JSON, the
   * nearest measure there is (such rows age out with the 30-day horizon).
   */
  private async moveOldFetches(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TEMPORARY TABLE moved_items AS
      SELECT f.source, f.miner_hotkey, f.fetched_at, e.item,
             e.item->>'uri' AS uri,
             (e.item->>'datetime')::timestamptz AS datetime,
             octet_length(e.item::text) AS content_bytes
      FROM bucket_fetches f CROSS JOIN LATERAL jsonb_array_elements(f.items) AS e(item)
      WHERE e.item->>'uri' IS NOT NULL AND e.item->>'datetime' IS NOT NULL`);
    await queryRunner.query(`
      DO $$
      DECLARE day integer;
      BEGIN
        FOR day IN
          SELECT DISTINCT floor(extract(epoch FROM datetime) / 86400)::integer FROM moved_items
        LOOP
          EXECUTE format(
            'CREATE TABLE %I PARTITION OF stored_items FOR VALUES FROM (%s) TO (%s)',
            'stored_items_' || to_char(to_timestamp(day * 86400::bigint) AT TIME ZONE 'UTC', 'YYYYMMDD'),
            day * 24, day * 24 + 24);
        END LOOP;
      END $$`);
    // One row per (source, uri, hour): the record first fetched, and every miner that sent it.
    await queryRunner.query(`
      INSERT INTO stored_items (source, uri, time_bucket, datetime, label, username, item,
                                content_bytes, delivered_by, first_fetched_at, last_fetched_at)
      SELECT source, uri, time_bucket,
             (array_agg(datetime ORDER BY fetched_at))[1],
             left(lower((array_agg(item ORDER BY fetched_at))[1]->>'label'), 140),
             (array_agg(username ORDER BY fetched_at))[1],
             (array_agg(item ORDER BY fetched_at))[1],
             (array_agg(content_bytes ORDER BY fetched_at))[1],
             array_agg(DISTINCT miner_hotkey::text),
             min(fetched_at), max(fetched_at)
      FROM (
        SELECT *, floor(extract(epoch FROM datetime) / 3600)::integer AS time_bucket,
               lower(regexp_replace(btrim(coalesce(item->'user'->>'username', item->>'username', '')), '^@', '')) AS username
        FROM moved_items) AS m
      GROUP BY source, uri, time_bucket`);
    await queryRunner.query(`
      INSERT INTO stored_bucket_fetches (source, label, time_bucket, miner_hotkey, miner_uid,
                                         fetched_at, claimed_bytes, item_count, bytes)
      SELECT source, label, time_bucket, miner_hotkey, miner_uid, fetched_at, claimed_bytes,
             jsonb_array_length(items),
             coalesce((SELECT sum(octet_length(e::text)) FROM jsonb_array_elements(items) AS e), 0)
      FROM bucket_fetches`);
    await queryRunner.query('DROP TABLE moved_items');
  }

  /**
   * Back to one row per fetch with its items as a JSON array (as the reader of that schema keeps).
   */
  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE bucket_fetches (
        source smallint NOT NULL,
        label varchar(140),
        time_bucket integer NOT NULL,
        miner_hotkey varchar(64) NOT NULL,
        miner_uid integer NOT NULL,
        fetched_at timestamptz NOT NULL,
        claimed_bytes bigint NOT NULL,
        items jsonb NOT NULL,
        CONSTRAINT bucket_fetches_key UNIQUE NULLS NOT DISTINCT (source, label, time_bucket, miner_hotkey)
      )`);
    await queryRunner.query(
      'CREATE INDEX bucket_fetches_fetched_at ON bucket_fetches (fetched_at)',
    );
    // A fetch gets back the items of its bucket that its miner delivered.
    await queryRunner.query(`
      INSERT INTO bucket_fetches (source, label, time_bucket, miner_hotkey, miner_uid, fetched_at,
                                  claimed_bytes, items)
      SELECT f.source, f.label, f.time_bucket, f.miner_hotkey, f.miner_uid, f.fetched_at,
             f.claimed_bytes,
             coalesce((SELECT jsonb_agg(i.item ORDER BY i.datetime DESC, i.uri DESC)
                       FROM stored_items i
                       WHERE i.source = f.source AND i.time_bucket = f.time_bucket
                         AND i.label IS NOT DISTINCT FROM f.label
                         AND f.miner_hotkey = ANY(i.delivered_by)), '[]'::jsonb)
      FROM stored_bucket_fetches f`);
    await queryRunner.query('DROP TABLE stored_bucket_fetches');
    await queryRunner.query('DROP TABLE stored_items');
  }
}

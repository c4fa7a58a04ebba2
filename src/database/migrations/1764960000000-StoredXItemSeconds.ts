import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Stored X items dated to their post id's second. Items read from GetContentsByBuckets were
 * dated to their record's time, which miners keep rounded down to the minute, so date bounds
 * missed or took them by up to 59 s (an audit's finding); they are now dated to the second
 * their id holds (`convertContent`, docs/decisions.md "An X post's time is its id's"). The rows
 * stored before are corrected here, in place and in the same way: `datetime` and the item's
 * `datetime`, for an X row at a whole minute whose id (a snowflake, `x-post-id.ts`: ms =
 * (id >> 22) + 1288834974657) holds a later second of that minute. The hour, and so the key
 * and the partition, cannot change; nothing else is touched, no row is dropped. Rows of an
 * entity's second, of another minute than their id's, or whose id holds no time stay as they
 * are.
 */
export class StoredXItemSeconds1764960000000 implements MigrationInterface {
  name = 'StoredXItemSeconds1764960000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    // Epoch seconds throughout, so the session's time zone plays no part.
    await queryRunner.query(`
      UPDATE stored_items AS s
      SET datetime = to_timestamp(p.second),
          item = jsonb_set(s.item, '{datetime}', to_jsonb(
            to_char(to_timestamp(p.second) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')))
      FROM (
        SELECT source, uri, time_bucket,
               floor((floor(id / 4194304) + 1288834974657) / 1000) AS second
        FROM (SELECT source, uri, time_bucket,
                     substring(uri FROM '/status/([0-9]{1,20})/?$')::numeric AS id
              FROM stored_items WHERE source = 2) AS ids
        WHERE id >= 29700859247
      ) AS p
      WHERE s.source = p.source AND s.uri = p.uri AND s.time_bucket = p.time_bucket
        AND mod(p.second, 60) <> 0
        AND extract(epoch FROM s.datetime) = p.second - mod(p.second, 60)`);
  }

  /**
   * Nothing to undo: a release before this one reads and filters rows of any second (those of
   * GetDataEntityBucket always were), and the minute each row had is still its datetime's.
   */
  async down(): Promise<void> {}
}

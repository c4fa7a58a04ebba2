import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The miners' data index and the aggregates the stats endpoints read. Aggregates are kept up to
 * date incrementally (per-miner totals subtracted and added), never by scanning the index.
 */
export class MinerIndex1763900000000 implements MigrationInterface {
  name = 'MinerIndex1763900000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    // Labels are normalized (trimmed, lower-cased, at most 140 characters) and stored once.
    await queryRunner.query(`
      CREATE TABLE labels (
        id serial PRIMARY KEY,
        value varchar(140) NOT NULL UNIQUE
      )`);
    // One row per (miner, source, label, hour). label_id NULL = data without a label.
    // source: 1 = REDDIT, 2 = X (the protocol's ids). Partitioned by miner: replacing a miner's
    // index is TRUNCATE + COPY into its own small partition (created on first use), with no
    // dead rows left behind and no insertion into one huge index.
    await queryRunner.query(`
      CREATE TABLE miner_index (
        miner_uid integer NOT NULL,
        source smallint NOT NULL,
        label_id integer,
        time_bucket integer NOT NULL,
        content_size_bytes bigint NOT NULL
      ) PARTITION BY LIST (miner_uid)`);
    // query_bucket looks up (source, label, hour): each partition has its own index, built after
    // its rows are loaded (see MinerIndexRepository), not declared here on the parent.

    // Each miner's totals, so that its contribution can be subtracted without reading its index.
    await queryRunner.query(`
      CREATE TABLE miner_label_totals (
        miner_uid integer NOT NULL,
        source smallint NOT NULL,
        label_id integer NOT NULL,
        bytes bigint NOT NULL,
        PRIMARY KEY (miner_uid, source, label_id)
      )`);
    await queryRunner.query(`
      CREATE TABLE miner_bucket_totals (
        miner_uid integer NOT NULL,
        source smallint NOT NULL,
        time_bucket integer NOT NULL,
        bytes bigint NOT NULL,
        PRIMARY KEY (miner_uid, source, time_bucket)
      )`);
    await queryRunner.query(
      `CREATE INDEX miner_bucket_totals_hour_idx ON miner_bucket_totals (source, time_bucket)`,
    );

    // Network-wide totals: raw bytes and bytes weighted by each holder's credibility.
    await queryRunner.query(`
      CREATE TABLE label_totals (
        source smallint NOT NULL,
        label_id integer NOT NULL,
        -- The label's text, copied here so that the top-labels query needs no join.
        label varchar(140) NOT NULL,
        bytes bigint NOT NULL,
        adj_bytes double precision NOT NULL,
        PRIMARY KEY (source, label_id)
      ) WITH (fillfactor = 70)`);
    // No index on adj_bytes on purpose: it changes on every replace and credibility change, and
    // an index on it would make each of those updates a non-HOT one. Sorting the few thousand
    // labels of a source for the top 1000 takes a couple of milliseconds.
    await queryRunner.query(`
      CREATE TABLE bucket_totals (
        source smallint NOT NULL,
        time_bucket integer NOT NULL,
        bytes bigint NOT NULL,
        adj_bytes double precision NOT NULL,
        PRIMARY KEY (source, time_bucket)
      ) WITH (fillfactor = 70)`);

    // Bumped in every transaction that writes the totals: stats responses are cached per
    // version, so a cached answer is never stale, on any replica.
    await queryRunner.query(
      `CREATE TABLE aggregates_version (id smallint PRIMARY KEY CHECK (id = 1), version bigint NOT NULL)`,
    );
    await queryRunner.query(`INSERT INTO aggregates_version VALUES (1, 0)`);

    // Background jobs shared by replicas: who ran what when, so a job runs once per interval.
    await queryRunner.query(`
      CREATE TABLE job_runs (
        name varchar(64) PRIMARY KEY,
        started_at timestamptz,
        finished_at timestamptz,
        status varchar(16) NOT NULL DEFAULT 'idle',
        details jsonb NOT NULL DEFAULT '{}'
      )`);

    await queryRunner.query(`ALTER TABLE miners ADD COLUMN index_synced_at timestamptz`);
    await queryRunner.query(
      `ALTER TABLE miners ADD COLUMN index_buckets integer NOT NULL DEFAULT 0`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE miners DROP COLUMN index_buckets');
    await queryRunner.query('ALTER TABLE miners DROP COLUMN index_synced_at');
    for (const table of [
      'job_runs',
      'aggregates_version',
      'bucket_totals',
      'label_totals',
      'miner_bucket_totals',
      'miner_label_totals',
      'miner_index',
      'labels',
    ]) {
      await queryRunner.query(`DROP TABLE ${table}`);
    }
  }
}

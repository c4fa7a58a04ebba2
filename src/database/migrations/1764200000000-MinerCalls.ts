import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * What calling real miners needs kept across replicas and restarts: the calls made to each
 * miner per synapse within its budget window (miners penalise a validator hotkey that exceeds
 * their hourly limits), and the buckets fetched from miners, which query_bucket answers from
 * when it may not call again. Miners whose axon address is refused get a state of their own.
 */
export class MinerCalls1764200000000 implements MigrationInterface {
  name = 'MinerCalls1764200000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    // One row per (miner, synapse): the times of its calls still inside the window. Reserving a
    // call is one upsert on this row, which serializes concurrent reservations by its row lock.
    await queryRunner.query(`
      CREATE TABLE miner_call_budgets (
        miner_hotkey varchar(64) NOT NULL,
        synapse varchar(32) NOT NULL,
        calls timestamptz[] NOT NULL,
        PRIMARY KEY (miner_hotkey, synapse)
      )`);
    // The checked items of the newest fetch of a bucket from each miner.
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
    await queryRunner.query('ALTER TABLE miners DROP CONSTRAINT miners_state_check');
    await queryRunner.query(`
      ALTER TABLE miners ADD CONSTRAINT miners_state_check
        CHECK (state IN ('active', 'failing', 'address_refused', 'deregistered'))`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`UPDATE miners SET state = 'active' WHERE state = 'address_refused'`);
    await queryRunner.query('ALTER TABLE miners DROP CONSTRAINT miners_state_check');
    await queryRunner.query(`
      ALTER TABLE miners ADD CONSTRAINT miners_state_check
        CHECK (state IN ('active', 'failing', 'deregistered'))`);
    await queryRunner.query('DROP TABLE bucket_fetches');
    await queryRunner.query('DROP TABLE miner_call_budgets');
  }
}

import { MigrationInterface, QueryRunner } from 'typeorm';

export class InitialSchema1763700000000 implements MigrationInterface {
  name = 'InitialSchema1763700000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE api_keys (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        name varchar(100) NOT NULL,
        key_hash char(64) NOT NULL,
        prefix varchar(16) NOT NULL,
        tier varchar(16) NOT NULL CHECK (tier IN ('regular', 'validator')),
        is_active boolean NOT NULL DEFAULT true,
        created_at timestamptz NOT NULL DEFAULT now(),
        last_used_at timestamptz,
        deactivated_at timestamptz
      )`);
    await queryRunner.query(`CREATE UNIQUE INDEX api_keys_key_hash_idx ON api_keys (key_hash)`);

    await queryRunner.query(`
      CREATE TABLE miners (
        uid integer PRIMARY KEY,
        hotkey varchar(64) NOT NULL,
        coldkey varchar(64) NOT NULL,
        axon_url varchar(256),
        stake double precision NOT NULL DEFAULT 0,
        incentive double precision NOT NULL DEFAULT 0,
        validator_permit boolean NOT NULL DEFAULT false,
        credibility double precision NOT NULL DEFAULT 0.5 CHECK (credibility >= 0 AND credibility <= 1),
        state varchar(16) NOT NULL DEFAULT 'active' CHECK (state IN ('active', 'failing', 'deregistered')),
        last_seen_at timestamptz,
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await queryRunner.query(`CREATE UNIQUE INDEX miners_hotkey_idx ON miners (hotkey)`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TABLE miners');
    await queryRunner.query('DROP TABLE api_keys');
  }
}

import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Keys for real teams: an optional expiry, and an optional budget per window that overrides the
 * key class's. Both null for every existing key, so nothing changes for them.
 */
export class KeyExpiryAndLimits1764500000000 implements MigrationInterface {
  name = 'KeyExpiryAndLimits1764500000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      ALTER TABLE api_keys
        ADD COLUMN expires_at timestamptz,
        ADD COLUMN rate_limit integer CHECK (rate_limit BETWEEN 1 AND 1000000)`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE api_keys DROP COLUMN rate_limit, DROP COLUMN expires_at');
  }
}

import { Client } from 'pg';
import { MIGRATION_LOCK_ID } from '../../src/database/migration-lock';

/**
 * A replica migrating, as far as the others can tell: a connection of its own to `url` holding
 * the migration lock until it ends (`end()` lets the lock go).
 */
export async function holdMigrationLock(url: string): Promise<Client> {
  const replica = new Client({ connectionString: url });
  await replica.connect();
  await replica.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_ID]);
  return replica;
}

/** How many sessions wait for an advisory lock (a wait that was ended leaves none). */
export async function advisoryLockWaits(client: Client): Promise<number> {
  const { rows } = await client.query<{ waiting: string }>(
    `SELECT count(*) AS waiting FROM pg_locks WHERE locktype = 'advisory' AND NOT granted`,
  );
  return Number(rows[0].waiting);
}

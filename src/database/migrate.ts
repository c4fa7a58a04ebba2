import { DataSource } from 'typeorm';

/** Arbitrary constant shared by every replica so that only one of them migrates at a time. */
const MIGRATION_LOCK_ID = 7_013_000_001;

/**
 * Runs pending migrations under a session-level advisory lock: replicas starting together
 * wait for the first one instead of racing to create the same tables.
 */
export async function runMigrations(dataSource: DataSource): Promise<string[]> {
  const runner = dataSource.createQueryRunner();
  await runner.connect();
  try {
    await runner.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_ID]);
    const applied = await dataSource.runMigrations({ transaction: 'each' });
    return applied.map((migration) => migration.name);
  } finally {
    await runner.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_ID]).catch(() => undefined);
    await runner.release();
  }
}

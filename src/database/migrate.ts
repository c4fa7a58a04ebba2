import { DataSource } from 'typeorm';
import { buildMigrationDataSourceOptions } from './data-source-options';

/** Arbitrary constant shared by every replica so that only one of them migrates at a time. */
export const MIGRATION_LOCK_ID = 7_013_000_001;

/**
 * Brings the database at `url` up to date on a connection of its own (no statement timeout:
 * buildMigrationDataSourceOptions), under the migration lock. The one way the schema is
 * migrated: at start-up, from the command line and in the test setup. Returns the names applied.
 */
export async function migrateDatabase(url: string, connectTimeoutMs?: number): Promise<string[]> {
  const dataSource = new DataSource(buildMigrationDataSourceOptions(url, connectTimeoutMs));
  await dataSource.initialize();
  try {
    return await runMigrations(dataSource);
  } finally {
    await dataSource.destroy();
  }
}

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

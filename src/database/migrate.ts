import { DataSource } from 'typeorm';
import { buildMigrationDataSourceOptions } from './data-source-options';

/** Arbitrary constant shared by every replica so that only one of them migrates at a time. */
export const MIGRATION_LOCK_ID = 7_013_000_001;

/** What migrating did: the migrations applied now, and those recorded that this release lacks. */
export interface MigrationReport {
  applied: string[];
  /** Run by a newer release: this one is running on a schema it was not written for. */
  unknown: string[];
}

/**
 * Brings the database at `url` up to date on a connection of its own (no statement timeout:
 * buildMigrationDataSourceOptions), under the migration lock. The one way the schema is
 * migrated: at start-up, from the command line and in the test setup.
 */
export async function migrateDatabase(
  url: string,
  connectTimeoutMs?: number,
): Promise<MigrationReport> {
  const dataSource = new DataSource(buildMigrationDataSourceOptions(url, connectTimeoutMs));
  await dataSource.initialize();
  try {
    const applied = await runMigrations(dataSource);
    const known = new Set(dataSource.migrations.map((migration) => migration.name));
    const recorded = await dataSource.query<{ name: string }[]>(
      'SELECT name FROM migrations ORDER BY id',
    );
    const unknown = recorded.map((row) => row.name).filter((name) => !known.has(name));
    return { applied, unknown };
  } finally {
    await dataSource.destroy();
  }
}

/** What an operator reads of migrating, one line each: `warn` for a schema newer than this release. */
export function describeMigrations(report: MigrationReport): { log?: string; warn?: string } {
  return {
    ...(report.applied.length > 0
      ? { log: `migrations applied: ${report.applied.join(', ')}` }
      : {}),
    ...(report.unknown.length > 0
      ? {
          warn:
            `the database has migrations this release does not know (${report.unknown.join(', ')}): ` +
            'a newer release ran them. Running an older release on a newer schema is not supported ' +
            'beyond a rolling upgrade; to go back, revert them with the newer release ' +
            '(npm run migration:revert, once per migration) first (README, "Upgrading")',
        }
      : {}),
  };
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

import { commandLineConfig } from '../config/command-line-config';
import { describeMigrations, migrateDatabase, MigrationProgress, MigrationReport } from './migrate';
import { loadEnvFile } from '../config/env-file';

/** The database the migration commands act on (DATABASE_URL), with its connect timeout. */
export function commandLineDatabase(env: NodeJS.ProcessEnv): {
  url: string;
  connectTimeoutMs: number;
} {
  const config = commandLineConfig(env);
  if (!config.databaseUrl)
    throw new Error('DATABASE_URL must be set to run migrations from the CLI');
  return { url: config.databaseUrl, connectTimeoutMs: config.database.connectTimeoutMs };
}

/**
 * `npm run migration:run`: migrates DATABASE_URL as a separate step, the way a replica does at
 * start-up (migrateDatabase): under the replicas' migration lock, so that a replica starting
 * meanwhile waits rather than racing it, and with no statement timeout.
 */
export async function migrateFromCommandLine(
  env: NodeJS.ProcessEnv,
  progress?: MigrationProgress,
): Promise<MigrationReport> {
  const { url, connectTimeoutMs } = commandLineDatabase(env);
  return migrateDatabase(url, connectTimeoutMs, progress);
}

/**
 * `npm run migration:run` itself: what it prints, and its exit status. A failure exits 1, so
 * that a deployment that migrates as a separate step stops there instead of going on.
 */
export async function runMigrationCommand(
  env: NodeJS.ProcessEnv,
  write: { stdout(line: string): void; stderr(line: string): void },
): Promise<number> {
  try {
    // A wait for the lock (a replica migrating) is said on stderr, beside the output.
    const report = await migrateFromCommandLine(env, { report: (line) => write.stderr(line) });
    const { log, warn, vacuum } = describeMigrations(report);
    const nothing = warn ? 'none' : 'none (the schema is up to date)';
    write.stdout(log ?? `migrations applied: ${nothing}`);
    if (warn) write.stderr(warn);
    if (vacuum) write.stderr(vacuum);
    return 0;
  } catch (error) {
    write.stderr(`migration failed: ${error instanceof Error ? error.message : String(error)}`);
    return 1;
  }
}

if (require.main === module) {
  loadEnvFile();
  void runMigrationCommand(process.env, {
    stdout: (line) => process.stdout.write(`${line}\n`),
    stderr: (line) => process.stderr.write(`${line}\n`),
  }).then((status) => (process.exitCode = status));
}

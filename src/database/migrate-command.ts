import { config as loadDotEnv } from 'dotenv';
import { loadConfig } from '../config/load-config';
import { describeMigrations, migrateDatabase, MigrationReport } from './migrate';

/** The database the migration commands act on (DATABASE_URL), with its connect timeout. */
export function commandLineDatabase(env: NodeJS.ProcessEnv): {
  url: string;
  connectTimeoutMs: number;
} {
  // A migration needs the database only: what production requires of the service besides
  // (MASTER_KEY, a metagraph source) refused it (an operator audit). Malformed values still are.
  const config = loadConfig({ ...env, NODE_ENV: 'development' });
  if (!config.databaseUrl)
    throw new Error('DATABASE_URL must be set to run migrations from the CLI');
  return { url: config.databaseUrl, connectTimeoutMs: config.database.connectTimeoutMs };
}

/**
 * `npm run migration:run`: migrates DATABASE_URL as a separate step, the way a replica does at
 * start-up (migrateDatabase): under the replicas' migration lock, so that a replica starting
 * meanwhile waits rather than racing it, and with no statement timeout.
 */
export async function migrateFromCommandLine(env: NodeJS.ProcessEnv): Promise<MigrationReport> {
  const { url, connectTimeoutMs } = commandLineDatabase(env);
  return migrateDatabase(url, connectTimeoutMs);
}

if (require.main === module) {
  loadDotEnv();
  migrateFromCommandLine(process.env).then(
    (report) => {
      const { log, warn } = describeMigrations(report);
      const nothing = warn ? 'none' : 'none (the schema is up to date)';
      process.stdout.write(`${log ?? `migrations applied: ${nothing}`}\n`);
      if (warn) process.stderr.write(`${warn}\n`);
    },
    (error: unknown) => {
      process.stderr.write(
        `migration failed: ${error instanceof Error ? error.message : String(error)}\n`,
      );
      process.exitCode = 1;
    },
  );
}

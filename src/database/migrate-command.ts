import { constants } from 'node:os';
import { parseArgs } from 'node:util';
import { exitOnSignal } from '../common/lifecycle/graceful-shutdown';
import { helpAsked } from '../common/lifecycle/help-asked';
import { commandDatabaseFailure } from '../common/lifecycle/startup-failure';
import { commandLineConfig } from '../config/command-line-config';
import { loadEnvFile } from '../config/env-file';
import {
  describeMigrations,
  migrateDatabase,
  MigrationReport,
  revertLastMigration,
} from './migrate';
import { LockWaitEnded, MigrationProgress } from './migration-lock';

const USAGE =
  'usage: npm run migration:run | npm run migration:revert ' +
  '(built: node dist/src/database/migrate-command.js [--revert])';
/** What `--help` prints beneath USAGE (README, "Upgrading"). */
const HELP = [
  'Applies the pending migrations to DATABASE_URL (.env read as the service reads it), one',
  "transaction each, under the replicas' migration lock (a replica starting meanwhile waits);",
  '--revert undoes the last one applied instead (take a backup first: some lose data). Exit',
  'status: 0 done; 1 failed (what was applied before stays applied; run it again once the cause',
  'is mended); 2 arguments or settings refused (nothing done); 128 + the signal when stopped by',
  'one (130 SIGINT, 143 SIGTERM).',
];

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

/** Where the command writes: what it did on stdout, waits and failures on stderr. */
export interface CommandOutput {
  stdout(line: string): void;
  stderr(line: string): void;
}

/**
 * What the arguments ask for: `help`, `revert` or `migrate`; an Error saying what is wrong
 * otherwise. Strict: `--help` and `--dry-run` once ran every pending migration (a CLI audit).
 */
export function migrationRequest(args: string[]): 'help' | 'revert' | 'migrate' {
  if (helpAsked(args)) return 'help';
  const { values } = parseArgs({
    args,
    options: { revert: { type: 'boolean' } },
    strict: true,
    allowPositionals: false,
  });
  return values.revert ? 'revert' : 'migrate';
}

/**
 * `npm run migration:run` and `npm run migration:revert` themselves: what they print, and their
 * exit status (HELP). A failure exits 1, so that a deployment that migrates as a separate step
 * stops there instead of going on; arguments or settings that cannot work exit 2 before anything
 * is connected, so that a retrying job can tell them apart. `progress.onWait` (the signals,
 * below) ends a wait for the migration lock.
 */
export async function runMigrationCommand(
  args: string[],
  env: NodeJS.ProcessEnv,
  write: CommandOutput,
  onWait?: MigrationProgress['onWait'],
): Promise<number> {
  let request: ReturnType<typeof migrationRequest>;
  let database: ReturnType<typeof commandLineDatabase>;
  try {
    request = migrationRequest(args);
    if (request === 'help') {
      for (const line of [USAGE, ...HELP]) write.stdout(line);
      return 0;
    }
    database = commandLineDatabase(env);
  } catch (error) {
    write.stderr(`migration: ${(error as Error).message}`);
    write.stderr(USAGE);
    return 2;
  }
  // A wait for the lock (a replica migrating) is said on stderr, beside the output.
  const progress: MigrationProgress = { report: (line) => write.stderr(line), onWait };
  try {
    if (request === 'revert') {
      const reverted = await revertLastMigration(database.url, database.connectTimeoutMs, progress);
      write.stdout(`migration reverted: ${reverted ?? 'none (no migration is applied)'}`);
      return 0;
    }
    const report = await migrateFromCommandLine(env, progress);
    const { log, warn, vacuum } = describeMigrations(report);
    const nothing = warn ? 'none' : 'none (the schema is up to date)';
    write.stdout(log ?? `migrations applied: ${nothing}`);
    if (warn) write.stderr(warn);
    if (vacuum) write.stderr(vacuum);
    return 0;
  } catch (error) {
    if (error instanceof LockWaitEnded) {
      write.stderr(error.message);
      return 128 + (constants.signals[error.reason as NodeJS.Signals] ?? 0);
    }
    // A database named wrongly or out of reach says its setting, as the service's start does.
    write.stderr(
      `migration failed: ${commandDatabaseFailure(error, database.url)}` +
        (request === 'revert' ? '' : ' (what was applied before stays applied)'),
    );
    return 1;
  }
}

if (require.main === module) {
  loadEnvFile();
  // A signal while waiting for the lock ends the wait: nothing migrated, the session's wait
  // cancelled (left queued, it took the lock once free, for a process gone: a CLI audit). One
  // during a migration exits at once: the server rolls the migration back when it finds the
  // connection closed, its statement running on until then.
  let endWait: ((reason: string) => void) | undefined;
  const stop = exitOnSignal((signal) => {
    if (!endWait) return false;
    endWait(signal);
    return true;
  }, 'exiting at once: a migration under way is rolled back (what was applied before stays applied)');
  void runMigrationCommand(
    process.argv.slice(2),
    process.env,
    {
      stdout: (line) => process.stdout.write(`${line}\n`),
      stderr: (line) => process.stderr.write(`${line}\n`),
    },
    (end) => {
      endWait = end;
      return () => (endWait = undefined);
    },
  ).then((status) => {
    stop();
    process.exitCode = status;
  });
}

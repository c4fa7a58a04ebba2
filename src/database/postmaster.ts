import { ChildProcess, spawn } from 'node:child_process';
import { closeSync, existsSync, openSync, readFileSync, rmSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';
import { StartupError } from '../common/lifecycle/startup-failure';
import { keepersOf, startKeeper } from './postmaster-keeper';
import { isAlive, killServer } from './server-processes';

/** A Postgres server this process started, in a process group of its own. */
export interface Postmaster {
  /** Fast shutdown (SIGINT): open sessions are ended, the data is checkpointed. */
  stop(): Promise<void>;
  /** Where what happens to the server from now on is said (the app's logger, once it has one). */
  logTo(log: PostmasterLog): void;
}

/** Where the server's exit while it should run, and a stop that waits or kills, are said. */
export interface PostmasterLog {
  warn(message: string): void;
  error(message: string): void;
}

export interface PostmasterOptions {
  /** The `postgres` executable. */
  binary: string;
  databaseDir: string;
  port: number;
  /** The system user to run as (Postgres refuses root); none when we are not root. */
  user?: { uid: number; gid: number };
  /** Until logTo gives another: by default stderr. */
  log?: PostmasterLog;
}

/** The server's own log, beside its data: what it said when it did not start. */
const LOG_FILE = 'postgres.log';
/** A log grown past this is started afresh (the server logs little: starts, stops, failures). */
const LOG_LIMIT_BYTES = 10 * 1024 * 1024;
const READY_TIMEOUT_MS = 60_000;
const STOP_TIMEOUT_MS = 30_000;
/** A stop still waiting after this is said to wait, before the kill at STOP_TIMEOUT_MS. */
const STOP_WARN_MS = 5_000;
const POLL_MS = 50;

/**
 * Starts `postgres` in a process group of its own and resolves once it accepts connections.
 *
 * Own group: a Ctrl-C in the terminal signals the whole foreground group. Postgres in ours took
 * it as a fast shutdown at once, ending the sessions of the drain the same signal started (the
 * index sync's last writes failed). The server is stopped by `stop()`, after the app; should
 * this process exit without calling it (a second Ctrl-C, a crash), it is stopped on `exit`;
 * should it die without running even that (SIGKILL, the OOM killer), by its keeper.
 *
 * Ready: when its `postmaster.pid` names this child and says `ready`, as `pg_ctl -w` decides;
 * connecting to the port could reach another server that holds it while ours fails to bind.
 */
export async function startPostmaster(options: PostmasterOptions): Promise<Postmaster> {
  const logFile = join(options.databaseDir, LOG_FILE);
  const log = openSync(logFile, isOver(logFile, LOG_LIMIT_BYTES) ? 'w' : 'a');
  let child: ChildProcess;
  try {
    // TCP only (the gateway connects to 127.0.0.1): no Unix socket in /tmp, whose lock file a
    // killed server leaves behind, and which another user's server of the port, stopped or not,
    // would hold against ours.
    const args = ['-D', options.databaseDir, '-p', String(options.port), '-k', ''];
    child = spawn(options.binary, args, {
      ...options.user,
      detached: true,
      stdio: ['ignore', log, log],
      windowsHide: true,
    });
  } finally {
    closeSync(log);
  }
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  // Spawning can fail without a pid (ENOENT, EACCES): the error comes as an event.
  const failed = new Promise<Error>((resolve) => child.once('error', resolve));
  const keeper = child.pid === undefined ? undefined : startKeeper(child.pid);
  // Once the server is gone its pid may be reused: the keeper must not outlive it.
  const dismissKeeper = () => keeper?.kill('SIGKILL');
  child.once('exit', dismissKeeper);
  const stopOnExit = () => {
    dismissKeeper();
    child.kill('SIGINT');
  };
  process.on('exit', stopOnExit);
  // Without a pid it never ran (and emits no `exit`).
  const running = () =>
    child.pid !== undefined && child.exitCode === null && child.signalCode === null;

  let report = options.log ?? STDERR_LOG;
  /** Set once the server is ready and until stop() is called: an exit then is said. */
  let serving = false;
  child.once('exit', (code, signal) => {
    if (!serving) return;
    report.error(
      `the embedded Postgres this gateway started (pid ${child.pid}) exited while the gateway ` +
        `runs, ${code === null ? `killed by ${signal}` : `with exit code ${code}`}: every ` +
        `database request fails until the gateway is restarted; its log is ${logFile}`,
    );
  });

  const stop = async () => {
    serving = false;
    process.removeListener('exit', stopOnExit);
    dismissKeeper();
    if (!running()) return;
    child.kill('SIGINT');
    const pid = child.pid!;
    const warning = setTimeout(
      () =>
        report.warn(
          `the embedded Postgres (pid ${pid}) has not stopped ${STOP_WARN_MS / 1000} s after ` +
            `SIGINT (a fast shutdown); waiting for it up to ${STOP_TIMEOUT_MS / 1000} s in all, ` +
            'then killing it',
        ),
      STOP_WARN_MS,
    );
    const timer = setTimeout(() => {
      if (!running()) return;
      const others = killServer(pid);
      report.warn(
        `the embedded Postgres (pid ${pid}) did not stop within ${STOP_TIMEOUT_MS / 1000} s of ` +
          `SIGINT: killed it, its process group and its ${others} other child process` +
          `${others === 1 ? '' : 'es'} (SIGKILL); the next start recovers its data; its log ` +
          `is ${logFile}`,
      );
    }, STOP_TIMEOUT_MS);
    await exited;
    clearTimeout(warning);
    clearTimeout(timer);
  };

  const ready = await Promise.race([
    waitUntilReady(options.databaseDir, child, running),
    exited.then(() => new Error(`postgres exited with ${child.exitCode ?? child.signalCode}`)),
    failed,
  ]);
  if (ready !== undefined) {
    await stop();
    const said = lastLines(logFile, 5);
    throw new Error(`${ready.message}${said ? `; its log (${logFile}) ends: ${said}` : ''}`);
  }
  serving = true;
  return {
    stop,
    logTo: (next) => {
      report = next;
    },
  };
}

const STDERR_LOG: PostmasterLog = {
  warn: (message) => process.stderr.write(`${message}\n`),
  error: (message) => process.stderr.write(`${message}\n`),
};

async function waitUntilReady(
  databaseDir: string,
  child: ChildProcess,
  running: () => boolean,
): Promise<Error | undefined> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  while (running()) {
    if (isReady(databaseDir, child.pid)) return undefined;
    if (Date.now() > deadline)
      return new Error(`postgres did not accept connections within ${READY_TIMEOUT_MS} ms`);
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
  // The exit's own message wins the race.
  return new Promise<never>(() => undefined);
}

/** What a server's `postmaster.pid` says: line 1 its pid, line 8 its status (Postgres ≥ 10). */
export function readPidFile(databaseDir: string): { pid: number; ready: boolean } | undefined {
  try {
    const lines = readFileSync(join(databaseDir, 'postmaster.pid'), 'utf8').split('\n');
    return { pid: Number.parseInt(lines[0] ?? '', 10), ready: lines[7]?.trim() === 'ready' };
  } catch {
    return undefined;
  }
}

function isReady(databaseDir: string, pid: number | undefined): boolean {
  const file = readPidFile(databaseDir);
  return file !== undefined && file.pid === pid && file.ready;
}

function isOver(file: string, bytes: number): boolean {
  try {
    return statSync(file).size > bytes;
  } catch {
    return false;
  }
}

function lastLines(file: string, count: number): string {
  try {
    return readFileSync(file, 'utf8').trimEnd().split('\n').slice(-count).join(' | ');
  } catch {
    return '';
  }
}

/**
 * A server whose parent and keeper both died without stopping it (a killed process tree, a
 * machine without `sh`) is left running, or its pid file behind, and the next start then fails.
 * Stop such an orphan and clear the file before starting.
 *
 * The pid may be any process's by now: only the server of this directory is signalled, known by
 * its command line (servesDirectory); one that merely mentions postgres (a `tail -f` of its log,
 * psql, another server) is not, and the file naming it is stale. Where command lines cannot be
 * read (no /proc), a live pid is left alone with its file: Postgres itself refuses to start
 * beside the live process a pid file names, and replaces the file of a dead one.
 */
export function removeStalePostmaster(databaseDir: string, log: (message: string) => void): void {
  const file = readPidFile(databaseDir);
  if (!file) return;
  const { pid } = file;
  const serving =
    Number.isInteger(pid) && pid > 0 && isAlive(pid) && servesDirectory(pid, databaseDir);
  if (serving === undefined) {
    log(
      `${join(databaseDir, 'postmaster.pid')} names pid ${pid}, which is running, and its ` +
        'command line cannot be read: the file is left for postgres to judge',
    );
    return;
  }
  if (serving) {
    // Not an orphan while its keeper lives: the gateway that started it still runs (a second
    // `npm start` on the same DATA_DIR). Stopped, that gateway lost its database (an audit's).
    // An expected refusal, in one line: its stack said only where it was thrown.
    if (keepersOf(pid).length > 0)
      throw new StartupError(
        `Startup failed: the embedded Postgres data in ${databaseDir} is in use by a gateway ` +
          `still running (its postgres is pid ${pid}): stop that gateway, or give this one ` +
          'another DATA_DIR (or DATABASE_URL).',
      );
    log(`stopping orphaned embedded postgres (pid ${pid})`);
    process.kill(pid, 'SIGQUIT');
    const deadline = Date.now() + 5000;
    while (isAlive(pid) && Date.now() < deadline)
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 50);
    if (isAlive(pid) && servesDirectory(pid, databaseDir)) process.kill(pid, 'SIGKILL');
  }
  rmSync(join(databaseDir, 'postmaster.pid'), { force: true });
}

/**
 * Guards against pid reuse: whether `pid` runs the `postgres` executable on `databaseDir`, its
 * command line as startPostmaster spawns it (`postgres -D <databaseDir> …`, the directory
 * absolute). Undefined where command lines cannot be read; false for a process gone meanwhile.
 */
function servesDirectory(pid: number, databaseDir: string): boolean | undefined {
  let args: string[];
  try {
    args = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
  } catch {
    return existsSync('/proc/self/cmdline') ? false : undefined;
  }
  return args.some(
    (arg, index) =>
      arg === '-D' &&
      index > 0 &&
      basename(args[index - 1]) === 'postgres' &&
      args[index + 1] === databaseDir,
  );
}

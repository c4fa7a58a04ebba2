import { ChildProcess, spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { until } from '../../test/support/until';
import { StartupError } from '../common/lifecycle/startup-failure';
import { startupFailureText } from '../gateway';
import { readPidFile, removeStalePostmaster, startPostmaster } from './postmaster';
import { keepersOf } from './postmaster-keeper';
import { isAlive } from './server-processes';

/**
 * A stand-in for the `postgres` executable, a `sh` script named postgres (the keeper and
 * removeStalePostmaster look for that name in its command line): it writes `postmaster.pid` into
 * its data directory (`-D`) as Postgres does, line 1 its pid and line 8 its status, and records
 * in `signals` each signal it is sent. `body` runs after the traps are set; `$dir` is the data
 * directory.
 */
function fakePostgres(directory: string, body: string): string {
  const binary = join(directory, 'postgres');
  writeFileSync(
    binary,
    `#!/bin/sh
dir="$2"
pidfile() { printf '%s\\n%s\\n0\\n5432\\n\\n\\n\\n%s\\n' $$ "$dir" "$1" > "$dir/postmaster.pid"; }
stop() { echo "$1" >> "$dir/signals"; sleep 0.3; rm -f "$dir/postmaster.pid"; exit 0; }
trap 'stop INT' INT
trap 'stop TERM' TERM
trap 'stop QUIT' QUIT
echo $$ > "$dir/fake.pid"
${body}
`,
  );
  chmodSync(binary, 0o755);
  return binary;
}

/** Starting, then ready, then running until signalled. */
const STARTS = `pidfile starting; sleep 0.3; pidfile ready; while :; do sleep 0.05; done`;

function signalsOf(directory: string): string[] {
  return existsSync(join(directory, 'signals'))
    ? readFileSync(join(directory, 'signals'), 'utf8').trim().split('\n')
    : [];
}

/** Line 8 of the pid file, read here rather than by the code under test. */
function statusOf(directory: string): string {
  return readFileSync(join(directory, 'postmaster.pid'), 'utf8').split('\n')[7];
}

function fakePid(directory: string): number {
  return Number(readFileSync(join(directory, 'fake.pid'), 'utf8'));
}

/**
 * Whether the fake has written its pid: the shell creates the file before it writes to it, and
 * an empty file read as pid 0, which `isAlive` takes for this process group (a flake: a pid file
 * naming "pid 0" was judged stale and removed).
 */
function wrotePid(directory: string): boolean {
  return existsSync(join(directory, 'fake.pid')) && fakePid(directory) > 0;
}

/**
 * A process's fields in `/proc/<pid>/stat` after its command name: its state, its parent's pid,
 * its group's, …; undefined once it is gone.
 */
function statOf(pid: number): string[] | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(') ') + 2).split(' ');
  } catch {
    return undefined;
  }
}

/** A process that has exited and waits for its parent to reap it (state Z). */
const isZombie = (pid: number): boolean => statOf(pid)?.[0] === 'Z';

/** test/support's `until` for a check that answers true or false. */
function eventually(check: () => boolean, timeoutMs = 5000): Promise<true> {
  return until(() => Promise.resolve(check() || undefined), timeoutMs, 20);
}

/** Waits in real time, whatever timers the test faked. */
async function eventuallyReal(check: () => boolean): Promise<void> {
  const started = performance.now();
  while (!check()) {
    if (performance.now() - started > 5000) throw new Error('condition not met within 5000 ms');
    await new Promise((resolve) => setImmediate(resolve));
  }
}

describe(startPostmaster.name, () => {
  let directory: string;
  let stops: (() => Promise<void>)[];

  beforeEach(() => {
    directory = mkdtempSync(join(tmpdir(), 'postmaster-'));
    stops = [];
  });
  afterEach(async () => {
    for (const stop of stops) await stop();
    if (wrotePid(directory) && isAlive(fakePid(directory)))
      process.kill(fakePid(directory), 'SIGKILL');
    rmSync(directory, { recursive: true, force: true });
  });

  /** What the code under test said through its log, as `level: message`. */
  let said: string[];
  async function start(body = STARTS) {
    said = [];
    const server = await startPostmaster({
      binary: fakePostgres(directory, body),
      databaseDir: directory,
      port: 5432,
      log: {
        warn: (message) => said.push(`warn: ${message}`),
        error: (message) => said.push(`error: ${message}`),
      },
    });
    stops.push(() => server.stop());
    return server;
  }

  // A pid file that exists is not yet one that says the server accepts connections.
  it('resolves once the pid file says ready, not while it says starting', async () => {
    await start();
    expect(statusOf(directory)).toBe('ready');
  });

  // A pid file left by a server that did not stop (or another server's) says ready too.
  it('waits past a ready pid file that names another process until its own child writes one', async () => {
    writeFileSync(join(directory, 'postmaster.pid'), `${process.pid}\n\n\n\n\n\n\nready\n`);
    await start(`sleep 0.3; ${STARTS}`);
    expect(readPidFile(directory)?.pid).toBe(fakePid(directory));
    expect(statusOf(directory)).toBe('ready');
  });

  // SIGINT is Postgres's fast shutdown; SIGTERM (smart) waits for every session to end.
  it('stops the server with SIGINT and resolves only once it has exited', async () => {
    const server = await start();
    const pid = fakePid(directory);

    await server.stop();

    expect(signalsOf(directory)).toEqual(['INT']);
    expect(isAlive(pid)).toBe(false);
    expect(existsSync(join(directory, 'postmaster.pid'))).toBe(false);
  });

  // A terminal's Ctrl-C signals its whole foreground group: the server must not be in ours.
  it('runs the server in a process group of its own', async () => {
    await start();
    const pid = fakePid(directory);
    // After the state: the parent's pid, then the group's.
    expect(Number(statOf(pid)![2])).toBe(pid);
  });

  it('stops the server when this process exits without stopping it', async () => {
    const before = process.listeners('exit');
    const server = await start();
    const added = process.listeners('exit').filter((listener) => !before.includes(listener));
    expect(added).toHaveLength(1);

    added[0].call(process, 0);
    await eventually(() => !isAlive(fakePid(directory)));
    expect(signalsOf(directory)).toEqual(['INT']);

    await server.stop();
    expect(process.listeners('exit')).toEqual(before);
  });

  // The keeper stops the server if this process is killed; once the server is gone, its pid may
  // be another process's, which the keeper must never signal.
  it('keeps a keeper while the server runs, and ends it once the server stops by itself', async () => {
    await start();
    const pid = fakePid(directory);
    expect(keepersOf(pid)).toHaveLength(1);

    process.kill(pid, 'SIGTERM');
    await eventually(() => !isAlive(pid) && keepersOf(pid).length === 0);
  });

  it('ends the keeper when it stops the server', async () => {
    const server = await start();
    const pid = fakePid(directory);
    await server.stop();
    await eventually(() => keepersOf(pid).length === 0);
  });

  // Killed (kill -KILL, the OOM killer) while the gateway ran, it was only seen in each
  // request's "database unavailable: connect ECONNREFUSED".
  it('says, as an error, that the server exited while the gateway runs, how, and where its log is', async () => {
    const server = await start();
    const pid = fakePid(directory);
    process.kill(pid, 'SIGKILL');
    await eventually(() => said.length > 0);
    expect(said).toEqual([
      `error: the embedded Postgres this gateway started (pid ${pid}) exited while the gateway ` +
        'runs, killed by SIGKILL: every database request fails until the gateway is restarted; ' +
        `its log is ${join(directory, 'postgres.log')}`,
    ]);

    await server.stop();
    await (await start()).stop();
    expect(said).toEqual([]);
  });

  // A frozen Postgres (SIGSTOP, a hung disk) held the shutdown for 30 s in silence, then only the
  // postmaster was killed: its backends, each in a session of its own as Postgres makes them
  // (InitPostmasterChild's setsid), were left behind.
  // Its running loop starts a short-lived child after another, in its own group, as a server
  // busy with its own helpers: one that exited between two reads of /proc was counted as a
  // backend ("2 other child processes"; a fresh-clone CI met it once).
  it('warns while a stop waits, and after 30 s kills the server and its backends, saying so', async () => {
    const backend = `setsid sh -c 'echo $$ > "$0/backend.pid"; exec sleep 1000' "$dir" &`;
    const busy = 'pidfile starting; sleep 0.3; pidfile ready; while :; do /bin/true; done';
    const server = await start(`trap '' INT; ${backend} ${busy}`);
    const pid = fakePid(directory);
    await eventually(() => existsSync(join(directory, 'backend.pid')));
    const backendPid = Number(readFileSync(join(directory, 'backend.pid'), 'utf8'));
    expect(Number(statOf(backendPid)![3])).toBe(backendPid);
    jest.useFakeTimers({ doNotFake: ['nextTick', 'setImmediate', 'performance'] });
    try {
      const stopped = server.stop();
      await jest.advanceTimersByTimeAsync(5_000);
      expect(said).toEqual([
        `warn: the embedded Postgres (pid ${pid}) has not stopped 5 s after SIGINT (a fast ` +
          'shutdown); waiting for it up to 30 s in all, then killing it',
      ]);
      await jest.advanceTimersByTimeAsync(25_000);
      await stopped;
      expect(said.slice(1)).toEqual([
        `warn: the embedded Postgres (pid ${pid}) did not stop within 30 s of SIGINT: killed ` +
          'it, its process group and its 1 other child process (SIGKILL); the next start ' +
          `recovers its data; its log is ${join(directory, 'postgres.log')}`,
      ]);
      expect(isAlive(pid)).toBe(false);
      await eventuallyReal(() => !isAlive(backendPid) || isZombie(backendPid));
    } finally {
      jest.useRealTimers();
      if (isAlive(backendPid)) process.kill(backendPid, 'SIGKILL');
    }
  });

  // A server that never says ready (a hung start) is stopped, not left running behind the error.
  it('gives up on a server not ready within 60 s, and stops it', async () => {
    jest.useFakeTimers({ doNotFake: ['nextTick', 'setImmediate', 'performance'] });
    try {
      const failure = start(`pidfile starting; while :; do sleep 0.05; done`).then(
        () => new Error('it started'),
        (error: Error) => error,
      );
      await eventuallyReal(() => existsSync(join(directory, 'postmaster.pid')));
      await jest.advanceTimersByTimeAsync(60_100);
      expect((await failure).message).toBe('postgres did not accept connections within 60000 ms');
      expect(signalsOf(directory)).toEqual(['INT']);
      expect(isAlive(fakePid(directory))).toBe(false);
    } finally {
      jest.useRealTimers();
    }
  });

  // What Postgres said last is why it did not start ("Address already in use").
  it('fails with its exit status and the last lines of its log when the server exits before it is ready', async () => {
    const lines = Array.from({ length: 8 }, (_, index) => `line ${index + 1}`);
    await expect(start(`printf '${lines.join('\\n')}\\n'; exit 1`)).rejects.toThrow(
      `postgres exited with 1; its log (${join(directory, 'postgres.log')}) ends: ` +
        'line 4 | line 5 | line 6 | line 7 | line 8',
    );
  });

  it('fails, rather than waiting, when the binary cannot be run', async () => {
    await expect(
      startPostmaster({ binary: join(directory, 'none'), databaseDir: directory, port: 5432 }),
    ).rejects.toThrow(/ENOENT/);
  });

  // The log is what an operator reads after a failed start: kept across starts, but bounded.
  it('appends to its log across starts, and starts it afresh once it passed 10 MB', async () => {
    const log = join(directory, 'postgres.log');
    writeFileSync(log, 'an earlier start\n');
    const body = `echo started; ${STARTS}`;
    await (await start(body)).stop();
    expect(readFileSync(log, 'utf8')).toBe('an earlier start\nstarted\n');

    writeFileSync(log, 'x'.repeat(10 * 1024 * 1024 + 1));
    await (await start(body)).stop();
    expect(readFileSync(log, 'utf8')).toBe('started\n');
  });

  it('keeps a log of exactly 10 MB', async () => {
    const log = join(directory, 'postgres.log');
    writeFileSync(log, 'x'.repeat(10 * 1024 * 1024));
    await (await start(`echo started; ${STARTS}`)).stop();
    expect(readFileSync(log, 'utf8').endsWith('xstarted\n')).toBe(true);
  });
});

describe(removeStalePostmaster.name, () => {
  let directory: string;
  let other: ChildProcess | undefined;

  beforeEach(() => {
    directory = mkdtempSync(join(tmpdir(), 'stale-postmaster-'));
    other = undefined;
  });
  afterEach(() => {
    if (other?.pid !== undefined && isAlive(other.pid)) other.kill('SIGKILL');
    if (wrotePid(directory) && isAlive(fakePid(directory)))
      process.kill(fakePid(directory), 'SIGKILL');
    rmSync(directory, { recursive: true, force: true });
  });

  function writePidFile(pid: number) {
    writeFileSync(join(directory, 'postmaster.pid'), `${pid}\n${directory}\n\n\n\n\n\nready\n`);
  }

  /**
   * A postgres left running by a parent that died: not our child, in a group of its own. A node
   * of ours runs it and reaps it once it exits: this process cannot while removeStalePostmaster
   * blocks it, and the zombie of a child of ours would look alive.
   */
  async function orphan(body: string): Promise<number> {
    const binary = fakePostgres(directory, body);
    const runner = `require('node:child_process').spawn(process.argv[1], ['-D', process.argv[2]], { detached: true, stdio: 'ignore' })`;
    other = spawn(process.execPath, ['-e', runner, binary, directory], { stdio: 'ignore' });
    await eventually(() => wrotePid(directory));
    return fakePid(directory);
  }

  it('stops an orphaned postgres the pid file names, removes the file and says so', async () => {
    const pid = await orphan('while :; do sleep 0.05; done');
    writePidFile(pid);
    const said: string[] = [];

    removeStalePostmaster(directory, (message) => said.push(message));

    // Gone, or a zombie its parent (another node, which a loaded machine may not schedule for a
    // while) has not reaped yet: CI once read it alive right after the call.
    await eventually(() => !isAlive(pid) || isZombie(pid));
    expect(signalsOf(directory)).toEqual(['QUIT']);
    expect(existsSync(join(directory, 'postmaster.pid'))).toBe(false);
    expect(said).toEqual([`stopping orphaned embedded postgres (pid ${pid})`]);
  });

  // Postgres ignores SIGQUIT in no state we know of, but a server that does not stop must not
  // keep the port and the data directory from the one about to start.
  it('kills an orphan that is still alive 5 s after SIGQUIT', async () => {
    const pid = await orphan(
      `trap 'echo QUIT >> "$dir/signals"' QUIT; while :; do sleep 0.05; done`,
    );
    writePidFile(pid);

    removeStalePostmaster(directory, () => undefined);

    // Killed means killed: a zombie its parent has not reaped yet counts (the parent is another
    // node, which a loaded machine may not schedule for a while).
    await eventually(() => !isAlive(pid) || isZombie(pid));
    expect(signalsOf(directory)).toEqual(['QUIT']);
  }, 15_000);

  // A second `npm start` on the same DATA_DIR stopped the first gateway's database (SIGQUIT) and
  // took its place; when it exited, the first was left with none (an audit's finding).
  it('refuses to start beside a postgres whose gateway still runs (its keeper lives), stopping nothing', async () => {
    const pid = await orphan('while :; do sleep 0.05; done');
    writePidFile(pid);
    const keeper = spawn('/bin/sh', ['-c', 'sleep 30', 'postgres-keeper', String(pid)], {
      stdio: 'ignore',
    });
    try {
      await eventually(() => keepersOf(pid).includes(keeper.pid!));
      const said: string[] = [];

      let refusal: unknown;
      try {
        removeStalePostmaster(directory, (message) => said.push(message));
      } catch (error) {
        refusal = error;
      }

      // An expected refusal: one line, no stack (a second `npm start` printed four `at` lines).
      expect(refusal).toBeInstanceOf(StartupError);
      expect(startupFailureText(refusal)).toBe(
        `Startup failed: the embedded Postgres data in ${directory} is in use by a gateway still ` +
          `running (its postgres is pid ${pid}): stop that gateway, or give this one another ` +
          'DATA_DIR (or DATABASE_URL).',
      );

      expect(isAlive(pid)).toBe(true);
      expect(signalsOf(directory)).toEqual([]);
      expect(existsSync(join(directory, 'postmaster.pid'))).toBe(true);
      expect(said).toEqual([]);
    } finally {
      keeper.kill('SIGKILL');
    }
  });

  // The pid of a server long gone may be any process's now (after a reboot, a container's),
  // even one whose command line mentions postgres, here the server's own log and directory:
  // SIGQUIT, then SIGKILL, ended that one (an audit's finding).
  it.each([
    ['a process that is not postgres', () => spawn('sleep', ['30'], { stdio: 'ignore' })],
    [
      'a process that only mentions postgres or this directory',
      () => {
        writeFileSync(join(directory, 'postgres.log'), '');
        return spawn('tail', ['-f', join(directory, 'postgres.log')], { stdio: 'ignore' });
      },
    ],
  ])('leaves alone %s, and removes the stale pid file that names it', async (_, start) => {
    other = start();
    const { pid } = other;
    // Once it runs its command, not the test's before exec.
    await eventually(() =>
      readFileSync(`/proc/${pid!}/cmdline`, 'utf8').startsWith(other!.spawnfile),
    );
    writePidFile(pid!);
    const said: string[] = [];

    removeStalePostmaster(directory, (message) => said.push(message));

    expect(isAlive(pid!)).toBe(true);
    expect(said).toEqual([]);
    expect(existsSync(join(directory, 'postmaster.pid'))).toBe(false);
  });

  it("leaves alone a postgres serving another directory, and removes this one's stale pid file", async () => {
    const elsewhere = mkdtempSync(join(tmpdir(), 'stale-postmaster-elsewhere-'));
    try {
      const binary = fakePostgres(elsewhere, 'while :; do sleep 0.05; done');
      other = spawn(binary, ['-D', elsewhere], { stdio: 'ignore' });
      await eventually(() => wrotePid(elsewhere));
      writePidFile(other.pid!);

      removeStalePostmaster(directory, () => undefined);

      expect(isAlive(other.pid!)).toBe(true);
      expect(signalsOf(elsewhere)).toEqual([]);
      expect(existsSync(join(directory, 'postmaster.pid'))).toBe(false);
    } finally {
      other?.kill('SIGKILL');
      rmSync(elsewhere, { recursive: true, force: true });
    }
  });

  // macOS has no /proc: any live process the pid file named was stopped, whatever it was.
  it('signals nothing where command lines cannot be read, and leaves the pid file of a live pid to postgres', async () => {
    const pid = await orphan('while :; do sleep 0.05; done');
    writePidFile(pid);
    const fs = jest.requireActual<typeof import('node:fs')>('node:fs');
    const { existsSync: exists, readFileSync: read } = fs;
    jest
      .spyOn(fs, 'existsSync')
      .mockImplementation((path) => !String(path).startsWith('/proc/') && exists(path));
    jest.spyOn(fs, 'readFileSync').mockImplementation(((path: string, ...rest: []) => {
      if (String(path).startsWith('/proc/'))
        throw new Error(`ENOENT: no such file, open '${path}'`);
      return read(path, ...rest);
    }) as typeof fs.readFileSync);
    const said: string[] = [];
    try {
      removeStalePostmaster(directory, (message) => said.push(message));
    } finally {
      jest.restoreAllMocks();
    }

    expect(isAlive(pid)).toBe(true);
    expect(signalsOf(directory)).toEqual([]);
    expect(existsSync(join(directory, 'postmaster.pid'))).toBe(true);
    expect(said).toEqual([
      `${join(directory, 'postmaster.pid')} names pid ${pid}, which is running, and its command line cannot be read: the file is left for postgres to judge`,
    ]);
  });

  // Postgres refuses to start on a pid file whose pid is alive: it must not be left.
  it('removes a pid file whose process is gone', async () => {
    other = spawn('true');
    await new Promise((resolve) => other!.once('exit', resolve));
    writePidFile(other.pid!);

    removeStalePostmaster(directory, () => undefined);

    expect(existsSync(join(directory, 'postmaster.pid'))).toBe(false);
  });

  it('does nothing without a pid file', () => {
    const said: string[] = [];
    removeStalePostmaster(directory, (message) => said.push(message));
    expect(said).toEqual([]);
  });
});

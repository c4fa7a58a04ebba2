import { spawnSync, SpawnSyncOptions } from 'node:child_process';
import { readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { readPidFile } from '../../src/database/postmaster';
import { isAlive } from '../../src/database/server-processes';
import { dropDatabase, onServer } from './database';
import { withDatabase } from '../../bench/support/database-server';

// A test run killed before its teardown (SIGKILL, the OOM killer, a closed terminal) leaves its
// databases on the server, and with an embedded server its cluster under the temp folder (the
// server itself its keeper stops: src/database/postmaster-keeper.ts). The next run's global setup
// clears what such runs left: on a shared machine, tens of MB each, run after run.

const RUN_DATABASE_PREFIX = 'gateway_test_';
/** The cluster folders of runs on an embedded server: `<prefix><random>` under the temp folder. */
export const RUN_CLUSTER_PREFIX = 'validator-gateway-test-pg-';
/**
 * CI's limit on a whole run. A run's leftovers are taken only once its process is gone and this
 * long has passed, so that a run whose process this machine cannot see (another pid namespace
 * sharing the server) is never cleared while it runs.
 */
export const ABANDONED_AFTER_MS = 90 * 60_000;

/** A run's database: its start and its jest process, which say when it is abandoned. */
export function runDatabaseName(startedAt: number, pid: number): string {
  return `${RUN_DATABASE_PREFIX}${startedAt}_${pid}`;
}

const RUN_DATABASE = /^gateway_test_(\d+)_(\d+)(?:_|$)/;

/**
 * Each run's builds of the service (app-process.ts), in a folder named after the run: a run
 * stopped while it built left the one shared build's lock behind, and every later run of the
 * process specs waited 3 minutes on it, then failed (a workflow audit).
 */
export const RUN_BUILDS = resolve(__dirname, '../../node_modules/.cache/test-builds');

/**
 * Removes the folders of killed runs under `parent`, each named after its run (its temporary
 * folder, its builds), by the rule of their databases. Returns them.
 */
export function removeAbandonedRunFolders(parent: string, now = Date.now()): string[] {
  const names = statSync(parent, { throwIfNoEntry: false }) ? readdirSync(parent) : [];
  const abandoned = names
    .filter((name) => {
      const match = RUN_DATABASE.exec(name);
      return match !== null && isAbandoned(Number(match[1]), Number(match[2]), now);
    })
    .map((name) => join(parent, name));
  // One that cannot be removed (another user's, under a shared temp folder) is left, not this
  // run's failure.
  return abandoned.filter((folder) => {
    try {
      rmSync(folder, { recursive: true, force: true });
      return true;
    } catch {
      return false;
    }
  });
}

/**
 * Drops a run's database and its scratch databases at once, from a process that is exiting
 * (no awaiting there): on a Ctrl-C or SIGTERM jest runs no teardown, and each stopped run left
 * its databases for the next run to clear 90 minutes later (a workflow audit). Best effort, in
 * 10 s at most; says what failed.
 */
export function dropRunDatabasesSync(serverUrl: string, run: string): void {
  const options = {
    env: { ...process.env, SERVER_URL: withDatabase(serverUrl, 'postgres'), RUN: run },
    stdio: ['ignore', 'ignore', 'inherit'],
    timeout: 10_000,
    killSignal: 'SIGKILL',
    // A session of its own (spawnSync takes it, undocumented): a Ctrl-C comes twice under npm,
    // and the second, sent to jest's group while it exits, killed this child half-way. The
    // script also ignores those signals, for a platform that would not.
    detached: true,
  } as SpawnSyncOptions;
  const dropping = spawnSync(process.execPath, [join(__dirname, 'drop-run-databases.js')], options);
  if (dropping.error || dropping.signal)
    process.stderr.write(
      `could not drop the databases of the stopped test run ${run}: ` +
        `${dropping.error?.message ?? `ended by ${dropping.signal}`}\n`,
    );
}

/** A run as the global setup made it (globals.d.ts `__TEST_RUN__`). */
export interface TestRun {
  serverUrl: string;
  name: string;
  temp: string;
  embedded: boolean;
  tornDown: boolean;
}

/**
 * Clears what a run made: its databases (on an embedded server, the cluster goes whole), its
 * temporary folder and its builds. By the teardown, or by the setup's `exit` listener when jest
 * exits without it.
 */
export function clearRun(run: TestRun): void {
  rmSync(run.temp, { recursive: true, force: true });
  rmSync(join(RUN_BUILDS, run.name), { recursive: true, force: true });
  if (!run.embedded) dropRunDatabasesSync(run.serverUrl, run.name);
}

/**
 * Drops the databases of runs whose process is gone and that started over ABANDONED_AFTER_MS
 * ago: each run's own and its scratch databases (scratchDatabaseName). Returns their names.
 */
export async function dropAbandonedRunDatabases(
  serverUrl: string,
  now = Date.now(),
): Promise<string[]> {
  const names = await onServer(serverUrl, async (client) => {
    const { rows } = await client.query<{ datname: string }>(
      `SELECT datname FROM pg_database WHERE starts_with(datname, $1) ORDER BY datname DESC`,
      [RUN_DATABASE_PREFIX],
    );
    return rows.map((row) => row.datname);
  });
  // Descending: a run's scratch databases (`<run>_…`) are dropped before the run's own.
  const abandoned = names.filter((name) => {
    const match = RUN_DATABASE.exec(name);
    return match !== null && isAbandoned(Number(match[1]), Number(match[2]), now);
  });
  const dropped: string[] = [];
  for (const name of abandoned) {
    // Another run clearing the same leftovers at once: theirs to finish, never this run's failure.
    const ok = await dropDatabase(serverUrl, name).then(
      () => true,
      () => false,
    );
    if (ok) dropped.push(name);
  }
  return dropped;
}

/**
 * Drops the roles of runs whose process is gone and that started over ABANDONED_AFTER_MS ago
 * (`<run>_…`: runtime-privileges.medium-spec.ts makes two). Roles belong to the server, not to a
 * database, so dropping a run's databases left them; run after dropAbandonedRunDatabases, as a
 * role that still owns a database cannot be dropped. Returns their names.
 */
export async function dropAbandonedRunRoles(
  serverUrl: string,
  now = Date.now(),
): Promise<string[]> {
  return onServer(serverUrl, async (client) => {
    const { rows } = await client.query<{ rolname: string }>(
      `SELECT rolname FROM pg_roles WHERE starts_with(rolname, $1) ORDER BY rolname`,
      [RUN_DATABASE_PREFIX],
    );
    const dropped: string[] = [];
    for (const { rolname } of rows) {
      const match = RUN_DATABASE.exec(rolname);
      if (match === null || !isAbandoned(Number(match[1]), Number(match[2]), now)) continue;
      // Another run dropping it at once, or a role still owning something: never this run's failure.
      const ok = await client.query(`DROP ROLE IF EXISTS ${client.escapeIdentifier(rolname)}`).then(
        () => true,
        () => false,
      );
      if (ok) dropped.push(rolname);
    }
    return dropped;
  });
}

/**
 * Removes the embedded clusters of killed runs: no server running in them, untouched for
 * ABANDONED_AFTER_MS (a run's writes its folder's time; its server's stop, the pid file).
 */
export function removeAbandonedClusters(now = Date.now(), folder = tmpdir()): string[] {
  const abandoned = readdirSync(folder)
    .filter((name) => name.startsWith(RUN_CLUSTER_PREFIX))
    .map((name) => join(folder, name))
    .filter((directory) => {
      const server = readPidFile(directory);
      if (server && isAlive(server.pid)) return false;
      // Gone already: another run cleared it between the listing and here.
      const touched = statSync(directory, { throwIfNoEntry: false })?.mtimeMs ?? now;
      return now - touched > ABANDONED_AFTER_MS;
    });
  for (const directory of abandoned) rmSync(directory, { recursive: true, force: true });
  return abandoned;
}

function isAbandoned(startedAt: number, pid: number, now: number): boolean {
  return now - startedAt > ABANDONED_AFTER_MS && pid > 0 && !isAlive(pid);
}

import { chmodSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { exitOnSignal } from '../../src/common/lifecycle/graceful-shutdown';
import { startEmbeddedPostgres } from '../../src/database/embedded-postgres';
import { migrateDatabase } from '../../src/database/migrate';
import {
  clearRun,
  dropAbandonedRunDatabases,
  dropAbandonedRunRoles,
  removeAbandonedClusters,
  removeAbandonedRunFolders,
  RUN_BUILDS,
  RUN_CLUSTER_PREFIX,
  runDatabaseName,
} from './abandoned-runs';
import { nonLoopbackDatabaseHost } from './connections';
import { createDatabase, isReachable } from './database';
import { testRedisUrl } from './test-redis';
import { LOCAL_SERVER_URL } from '../../bench/support/database';
import { withoutPassword } from '../../src/common/lifecycle/startup-failure';
import { redisProblem } from '../../bench/support/redis';

/**
 * Set on the medium and e2e projects (jest.config.js), so jest runs it once per run that
 * selects a test of either, and never for a unit-only run.
 *
 * Gives this run its own fresh, migrated database on a real Postgres: TEST_DATABASE_URL or
 * DATABASE_URL if set (loopback or a Unix socket only), else the local server on 127.0.0.1:5432 if
 * it answers, else an embedded one. Workers find it in TEST_RUN_DATABASE_URL; the teardown drops
 * it.
 */
export default async function globalSetup(): Promise<void> {
  const configured = process.env.TEST_DATABASE_URL ?? process.env.DATABASE_URL;
  // Runs outside the specs' loopback guard (./loopback-only.ts): checked here instead.
  for (const name of ['TEST_DATABASE_URL', 'DATABASE_URL']) {
    const host = nonLoopbackDatabaseHost(process.env[name] ?? '');
    if (process.env[name] && host !== undefined)
      throw new Error(
        `${name} points at ${host}: the tests create and drop databases, and connect to ` +
          'loopback only. Unset it, or give a Postgres on 127.0.0.1, localhost or a Unix socket.',
      );
  }
  await warnWithoutRedis();
  // The machine's temp folder, kept across the runs of one process (`jest --watch` runs the
  // setup again, with TMPDIR still the last run's folder).
  const machineTemp = (process.env.TEST_RUN_TMP_PARENT ??= tmpdir());
  let serverUrl = configured ?? LOCAL_SERVER_URL;
  const embedded = !configured && !(await isReachable(LOCAL_SERVER_URL));
  report('embedded clusters', removeAbandonedClusters(Date.now(), machineTemp));
  report('temporary folders', removeAbandonedRunFolders(machineTemp));
  report('builds', removeAbandonedRunFolders(RUN_BUILDS));
  // The builds of every run before runs had their own (a stale lock among them).
  for (const old of ['validator-gateway-e2e', 'validator-gateway-e2e-dev'])
    rmSync(join(RUN_BUILDS, '..', old), { recursive: true, force: true });
  if (embedded) {
    const directory = mkdtempSync(join(machineTemp, RUN_CLUSTER_PREFIX));
    const port = 55000 + Math.floor(Math.random() * 5000);
    const server = await startEmbeddedPostgres(directory, port, 'postgres');
    // Stopped by the teardown, which then removes its cluster (tens of MB per run).
    globalThis.__EMBEDDED_POSTGRES__ = {
      url: server.url,
      logTo: (log) => server.logTo(log),
      stop: async () => {
        await server.stop();
        rmSync(directory, { recursive: true, force: true });
      },
    };
    serverUrl = server.url;
  } else {
    report('databases', await named(dropAbandonedRunDatabases(serverUrl), serverUrl));
    report('roles', await named(dropAbandonedRunRoles(serverUrl), serverUrl));
  }
  const name = runDatabaseName(Date.now(), process.pid);
  // Jest dies of a Ctrl-C or a SIGTERM without its teardown and without its `exit` listeners
  // (the one that stops an embedded server among them): made to exit, it runs them, and this
  // one clears what the teardown would have (a workflow audit: each stopped run left its
  // databases, about 8 MB each, for 90 minutes).
  const temp = join(machineTemp, name);
  globalThis.__TEST_RUN__ = { serverUrl, name, temp, embedded, tornDown: false };
  if (!listening) {
    listening = true;
    exitOnSignal();
    process.once('exit', clearStoppedRun);
  }
  const url = await named(createDatabase(serverUrl, name), serverUrl);
  await migrateDatabase(url);

  // The run's temporary files, every spec's and the in-process apps', in one folder named after
  // the run: removed by the teardown or on a signal, and by a later run's clearing when the run
  // was killed. Each spec's own prefix under the shared folder was cleared by no one.
  mkdirSync(temp);
  // Reachable by the `postgres` user the embedded-Postgres specs run their servers as.
  chmodSync(temp, 0o755);
  process.env.TMPDIR = temp;
  process.env.TEST_RUN_SERVER_URL = serverUrl;
  process.env.TEST_RUN_DATABASE_NAME = name;
  process.env.TEST_RUN_DATABASE_URL = url;
}

let listening = false;

/**
 * What the teardown would have cleared, when jest exits without it (a signal, a failed setup):
 * the run's databases, from a process of its own (nothing can be awaited here), and its folders.
 */
function clearStoppedRun(): void {
  const run = globalThis.__TEST_RUN__;
  if (run && !run.tornDown) clearRun(run);
}

/**
 * Said at the start: without a Redis, its specs failed minutes later with messages naming none
 * (a timer left open, a 200 where a 429 was due; one file retried for 6 minutes). A warning
 * only: most specs need no Redis. One off loopback is not tried (the specs refuse it).
 */
async function warnWithoutRedis(): Promise<void> {
  const url = testRedisUrl();
  if (nonLoopbackDatabaseHost(url) !== undefined) return;
  const problem = await redisProblem(url);
  if (problem !== undefined)
    process.stderr.write(
      `\nRedis at ${withoutPassword(url)} does not answer (${problem}): the specs of ` +
        'Redis-backed parts will fail. Start it, or set TEST_REDIS_URL.\n',
    );
}

/**
 * `step` on the run's Postgres, its failure naming the server and the setting that chose it: a
 * bare `connect ECONNREFUSED` did not say that a DATABASE_URL exported for another project was
 * the one used (a workflow audit).
 */
async function named<T>(step: Promise<T>, serverUrl: string): Promise<T> {
  try {
    return await step;
  } catch (error) {
    const which = process.env.TEST_DATABASE_URL
      ? 'TEST_DATABASE_URL'
      : process.env.DATABASE_URL
        ? 'DATABASE_URL'
        : 'the Postgres the tests found';
    throw new Error(
      `the tests' Postgres (${which}: ${withoutPassword(serverUrl)}) refused the run's database: ` +
        (error as Error).message,
    );
  }
}

/**
 * Names what the run cleared of killed runs (abandoned-runs.ts), for whoever wonders where it went.
 */
function report(what: string, cleared: string[]): void {
  if (cleared.length > 0)
    process.stderr.write(
      `\nCleared ${cleared.length} ${what} of killed test runs: ${cleared.join(', ')}\n`,
    );
}

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { exitOnSignal } from '../../src/common/lifecycle/graceful-shutdown';
import { startEmbeddedPostgres } from '../../src/database/embedded-postgres';
import { migrateDatabase } from '../../src/database/migrate';
import {
  dropAbandonedRunDatabases,
  removeAbandonedClusters,
  RUN_CLUSTER_PREFIX,
  runDatabaseName,
} from './abandoned-runs';
import { nonLoopbackDatabaseHost } from './connections';
import { createDatabase, isReachable } from './database';
import { LOCAL_SERVER_URL } from '../../bench/support/database';

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
  let serverUrl = configured ?? LOCAL_SERVER_URL;
  const embedded = !configured && !(await isReachable(LOCAL_SERVER_URL));
  report('embedded clusters', removeAbandonedClusters());
  if (embedded) {
    const directory = mkdtempSync(join(tmpdir(), RUN_CLUSTER_PREFIX));
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
    // Jest dies of a Ctrl-C without its `exit` listeners, the one that stops this server among
    // them.
    exitOnSignal();
    serverUrl = server.url;
  } else {
    report('databases', await dropAbandonedRunDatabases(serverUrl));
  }
  const name = runDatabaseName(Date.now(), process.pid);
  const url = await createDatabase(serverUrl, name);
  await migrateDatabase(url);

  process.env.TEST_RUN_SERVER_URL = serverUrl;
  process.env.TEST_RUN_DATABASE_NAME = name;
  process.env.TEST_RUN_DATABASE_URL = url;
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

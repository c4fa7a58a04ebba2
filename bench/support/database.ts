import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createDatabase, dropDatabase, isReachable } from './database-server';
import { freePort } from './ports';
import { startEmbeddedPostgres } from '../../src/database/embedded-postgres';
import { withoutPassword } from '../../src/common/lifecycle/startup-failure';

/** Where benchmarks look for a Postgres when DATABASE_URL is not set (trust auth expected). */
export const LOCAL_SERVER_URL = 'postgres://postgres@127.0.0.1:5432/postgres';

export interface BenchDatabase {
  /** Connection URL of the database the benchmarked app should use. */
  url: string;
  /** For the report: where the database lives (never contains a password). */
  description: string;
  /** True when the data outlives the run (DATABASE_URL): benchmarks should undo their writes. */
  persistent: boolean;
  /** Drops the throwaway database and/or stops the embedded server. Safe to call twice. */
  release(): Promise<void>;
}

/**
 * Finds a Postgres for a benchmark: DATABASE_URL as-is if set (the user chose that database),
 * else a throwaway `<prefix>_<timestamp>` database on the local server if it answers, else an
 * embedded Postgres in a temporary directory. Benchmarks need no manual setup this way, and
 * leave nothing behind once `release()` has run.
 */
export async function acquireDatabase(
  prefix: string,
  env: NodeJS.ProcessEnv = process.env,
  localServerUrl = LOCAL_SERVER_URL,
): Promise<BenchDatabase> {
  const name = `${prefix}_${Date.now()}`;
  if (env.DATABASE_URL) {
    return {
      url: env.DATABASE_URL,
      description: `DATABASE_URL (${withoutPassword(env.DATABASE_URL)})`,
      persistent: true,
      release: () => Promise.resolve(),
    };
  }
  if (await isReachable(localServerUrl)) {
    const url = await createDatabase(localServerUrl, name);
    return {
      url,
      description: `throwaway database ${name} on ${withoutPassword(localServerUrl)}`,
      persistent: false,
      release: once(() => dropDatabase(localServerUrl, name)),
    };
  }
  const directory = mkdtempSync(join(tmpdir(), `${prefix}-pg-`));
  try {
    const port = await freePort();
    // The whole cluster is temporary, so the database needs no DROP: removing the dir suffices.
    const embedded = await startEmbeddedPostgres(directory, port, name);
    return {
      url: embedded.url,
      description: `embedded Postgres on 127.0.0.1:${port} in ${directory}`,
      persistent: false,
      release: once(async () => {
        try {
          await embedded.stop();
        } finally {
          rmSync(directory, { recursive: true, force: true });
        }
      }),
    };
  } catch (error) {
    rmSync(directory, { recursive: true, force: true });
    throw error;
  }
}

function once(action: () => Promise<void>): () => Promise<void> {
  let done: Promise<void> | undefined;
  return () => (done ??= action());
}

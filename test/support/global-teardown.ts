import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { RUN_BUILDS } from './abandoned-runs';
import { dropDatabase, onServer } from './database';

/**
 * Drops the run's database and every scratch database named after it (scratchDatabaseName), and
 * removes the run's temporary folder and builds (global-setup.ts).
 */
export default async function globalTeardown(): Promise<void> {
  const serverUrl = process.env.TEST_RUN_SERVER_URL;
  const name = process.env.TEST_RUN_DATABASE_NAME;
  globalThis.__TEST_RUN_TORN_DOWN__ = true;
  if (name) {
    if (process.env.TMPDIR?.endsWith(name))
      rmSync(process.env.TMPDIR, { recursive: true, force: true });
    rmSync(join(RUN_BUILDS, name), { recursive: true, force: true });
  }
  if (serverUrl && name) {
    const scratch = await onServer(serverUrl, async (client) => {
      const { rows } = await client.query<{ datname: string }>(
        `SELECT datname FROM pg_database WHERE starts_with(datname, $1)`,
        [`${name}_`],
      );
      return rows.map((row) => row.datname);
    });
    for (const database of [...scratch, name]) await dropDatabase(serverUrl, database);
  }
  await globalThis.__EMBEDDED_POSTGRES__?.stop();
}

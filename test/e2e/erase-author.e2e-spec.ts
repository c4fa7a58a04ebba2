import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import { buildDataSourceOptions } from '../../src/database/data-source-options';
import { migrateDatabase } from '../../src/database/migrate';
import { buildService } from '../support/app-process';
import { runBuiltCommand } from '../support/built-command';
import { createDatabase, dropDatabase, scratchDatabaseName } from '../support/database';
import { storeComments } from '../support/erasure';

/**
 * `npm run erase-author`'s script as an operator runs it: the compiled command, a process of its
 * own, given its settings by the environment, in a directory without a `.env`.
 */
describe('The erase-author command', () => {
  const serverUrl = process.env.TEST_RUN_SERVER_URL!;
  let name: string;
  let url: string;
  let database: DataSource;
  let dataDir: string;

  const command = (args: string[], env: Record<string, string>) =>
    runBuiltCommand('src/modules/erasure/erase-author-command.js', args, env, dataDir);
  const erinsStored = async () =>
    (
      await database.query<{ count: number }[]>(
        `SELECT count(*)::int AS count FROM stored_items WHERE username = 'erin'`,
      )
    )[0].count;

  beforeAll(async () => {
    buildService();
    name = scratchDatabaseName('erasecli');
    url = await createDatabase(serverUrl, name);
    await migrateDatabase(url);
    database = new DataSource(buildDataSourceOptions(url, { poolSize: 2 }));
    await database.initialize();
  }, 240_000);
  afterAll(async () => {
    await database?.destroy();
    if (name) await dropDatabase(serverUrl, name);
  });
  beforeEach(() => (dataDir = mkdtempSync(join(tmpdir(), 'erase-author-'))));
  afterEach(async () => {
    rmSync(dataDir, { recursive: true, force: true });
    // The register too: the first test's erasure of erin keeps her out of the next one's store.
    await database.query('TRUNCATE stored_items, stored_bucket_fetches, erased_authors');
  });

  it("erases the author's posts and prints the summary, exit status 0", async () => {
    await storeComments(database, ['Erin', 'dave']);

    const exit = await command(['--source', 'reddit', '--username', '@erin'], {
      DATABASE_URL: url,
      DATA_DIR: dataDir,
    });

    expect(exit.stderr).toEqual([]);
    expect(exit.code).toBe(0);
    expect(exit.stdout[0]).toBe(
      `Erasure of REDDIT author "erin", datasets under ${dataDir}/datasets`,
    );
    expect(exit.stdout[1]).toMatch(/^erased_authors: registered at \S+: kept out of /);
    expect(exit.stdout).toContain('stored_items: 1 row removed');
    expect(exit.stdout).toContain('Still to do:');
    expect(await erinsStored()).toBe(0);
  });

  it('refuses arguments that name no author with exit status 2, touching nothing', async () => {
    await storeComments(database, ['erin']);

    const exit = await command(['--source', 'reddit', '--username', 'erin', 'now'], {
      DATABASE_URL: url,
      DATA_DIR: dataDir,
    });

    expect(exit.code).toBe(2);
    expect(exit.stdout).toEqual([]);
    expect(exit.stderr[0]).toMatch(/^erase-author: Unexpected argument 'now'/);
    expect(await erinsStored()).toBe(1);
  });

  // Settings that cannot work are 2, as arguments are: a job retrying on 1 need not retry them.
  it('says DATABASE_URL is needed, and refuses a malformed setting, exit status 2', async () => {
    const exit = await command(['--source', 'x', '--username', 'erin'], { DATA_DIR: dataDir });

    expect(exit.code).toBe(2);
    expect(exit.stderr).toEqual([
      "erase-author: DATABASE_URL must be set to erase an author's posts",
    ]);
    const malformed = await command(['--source', 'x', '--username', 'erin'], {
      DATABASE_URL: url,
      DATA_DIR: dataDir,
      DATABASE_CONNECT_TIMEOUT_MS: 'soon',
    });
    expect(malformed.code).toBe(2);
    expect(malformed.stderr.join('\n')).toContain('DATABASE_CONNECT_TIMEOUT_MS');
  });

  it('names DATABASE_URL, its password as ***, when the database cannot be reached, exit status 1', async () => {
    const exit = await command(['--source', 'x', '--username', 'erin'], {
      DATABASE_URL: 'postgres://gateway:hunter2-secret@127.0.0.1:1/gateway',
      DATA_DIR: dataDir,
    });

    expect(exit.code).toBe(1);
    expect(exit.stderr).toEqual([
      expect.stringMatching(
        /^erasure failed: cannot use the database of DATABASE_URL=postgres:\/\/gateway:\*\*\*@127\.0\.0\.1:1\/gateway: .*ECONNREFUSED.* \(nothing removed; run it again\)$/,
      ),
    ]);
  });
});

import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import { forEachLine } from '../../src/common/text-lines';
import { buildDataSourceOptions } from '../../src/database/data-source-options';
import { migrateDatabase } from '../../src/database/migrate';
import { buildService, builtScript } from '../support/app-process';
import { createDatabase, dropDatabase, scratchDatabaseName } from '../support/database';
import { storeComments } from '../support/erasure';
import { GUARDED_NODE_ARGS } from '../support/loopback-guard';

/** What the command printed, and how it exited. */
interface Exit {
  code: number | string;
  stdout: string[];
  stderr: string[];
}

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

  function command(args: string[], env: Record<string, string>): Promise<Exit> {
    const child = spawn(
      process.execPath,
      [...GUARDED_NODE_ARGS, builtScript('src/modules/erasure/erase-author-command.js'), ...args],
      {
        cwd: dataDir,
        env: { PATH: process.env.PATH, MINER_ALLOWED_NETWORKS: '127.0.0.0/8', ...env },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    const stdout: string[] = [];
    const stderr: string[] = [];
    forEachLine(child.stdout, (line) => stdout.push(line));
    forEachLine(child.stderr, (line) => stderr.push(line));
    return new Promise((done) =>
      child.once('close', (code, signal) => done({ code: code ?? signal ?? -1, stdout, stderr })),
    );
  }
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

  it('says DATABASE_URL is needed, exit status 1', async () => {
    const exit = await command(['--source', 'x', '--username', 'erin'], { DATA_DIR: dataDir });

    expect(exit.code).toBe(1);
    expect(exit.stderr).toEqual([
      "erase-author: DATABASE_URL must be set to erase an author's posts",
    ]);
  });
});

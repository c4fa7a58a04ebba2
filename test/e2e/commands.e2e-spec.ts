import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { buildService } from '../support/app-process';
import { runBuiltCommand } from '../support/built-command';
import { createDatabase, dropDatabase, scratchDatabaseName } from '../support/database';
import { until } from '../support/until';
import { advisoryLockWaits, holdMigrationLock } from '../support/migration-lock';

/**
 * The built gateway and migration command given arguments, as an operator gives them: `--help`
 * answered and nothing touched, anything else refused with 2, and the migration command's wait
 * for the lock ended by a signal with its query cancelled (a CLI audit: `--help` migrated the
 * database, and a SIGTERM left the wait queued for a process gone).
 */
describe('The built commands and their arguments', () => {
  const serverUrl = process.env.TEST_RUN_SERVER_URL!;
  let name: string;
  let url: string;
  let cwd: string;

  const tables = async () => {
    const client = new Client({ connectionString: url });
    await client.connect();
    try {
      const { rowCount } = await client.query(
        "SELECT 1 FROM pg_tables WHERE schemaname = 'public'",
      );
      return rowCount;
    } finally {
      await client.end();
    }
  };

  beforeAll(async () => {
    buildService();
    name = scratchDatabaseName('commands');
    url = await createDatabase(serverUrl, name);
  }, 240_000);
  afterAll(async () => {
    if (name) await dropDatabase(serverUrl, name);
  });
  beforeEach(() => (cwd = mkdtempSync(join(tmpdir(), 'commands-'))));
  afterEach(() => rmSync(cwd, { recursive: true, force: true }));

  it('gateway --help prints its usage and exit statuses, and starts nothing', async () => {
    const exit = await runBuiltCommand(
      'src/main.js',
      ['--help'],
      { NODE_ENV: 'development', DATABASE_URL: url, DATA_DIR: join(cwd, 'data'), PORT: '0' },
      cwd,
    );

    expect(exit.code).toBe(0);
    expect(exit.stdout[0]).toMatch(/^usage: npm start /);
    expect(exit.stdout.join(' ')).toContain('2 arguments refused');
    expect(exit.stderr).toEqual([]);
    expect(existsSync(join(cwd, 'data'))).toBe(false);
    expect(await tables()).toBe(0);
  });

  it('gateway refuses an argument with exit 2, naming it, and starts nothing', async () => {
    const exit = await runBuiltCommand(
      'src/main.js',
      ['--port', '4000'],
      { NODE_ENV: 'development', DATABASE_URL: url, DATA_DIR: join(cwd, 'data'), PORT: '0' },
      cwd,
    );

    expect(exit.code).toBe(2);
    expect(exit.stderr).toEqual([
      'gateway: takes no arguments ("--port" "4000"): set its environment instead (--help)',
    ]);
    expect(exit.stdout).toEqual([]);
    expect(readdirSync(cwd)).toEqual([]);
  });

  it('migration --help prints its usage and migrates nothing', async () => {
    const exit = await runBuiltCommand(
      'src/database/migrate-command.js',
      ['--help'],
      { DATABASE_URL: url },
      cwd,
    );

    expect(exit.code).toBe(0);
    expect(exit.stdout[0]).toMatch(/^usage: npm run migration:run \| npm run migration:revert /);
    expect(await tables()).toBe(0);
  });

  it('migration on SIGTERM while waiting for the lock: says so, exits 143, its wait cancelled', async () => {
    const replica = await holdMigrationLock(url);
    try {
      const exit = await runBuiltCommand(
        'src/database/migrate-command.js',
        [],
        { DATABASE_URL: url },
        cwd,
        (child, output) => {
          const waiting = () =>
            Promise.resolve(
              output.stderr.some((line) => line.startsWith('waiting for the migration lock'))
                ? true
                : undefined,
            );
          void until(waiting, 20_000).then(() => child.kill('SIGTERM'));
        },
      );

      expect(exit.code).toBe(143);
      expect(exit.stderr.at(-1)).toBe(
        'SIGTERM while waiting for the migration lock: stopped, nothing migrated',
      );
      expect(await advisoryLockWaits(replica)).toBe(0);
    } finally {
      await replica.end();
    }
    expect(await tables()).toBe(0);
  }, 30_000);
});

import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  ABANDONED_AFTER_MS,
  dropAbandonedRunDatabases,
  dropAbandonedRunRoles,
  dropRunDatabasesSync,
  removeAbandonedClusters,
  removeAbandonedRunFolders,
  RUN_CLUSTER_PREFIX,
  runDatabaseName,
} from '../support/abandoned-runs';
import { createDatabase, dropDatabase, onServer } from '../support/database';
import { withDatabase } from '../../bench/support/database-server';

const HOUR = 3_600_000;

/** A pid that was a process a moment ago and is none now. */
function deadPid(): number {
  const { pid } = spawnSync(process.execPath, ['-e', '']);
  return pid;
}

async function databases(serverUrl: string, names: string[]): Promise<string[]> {
  return onServer(serverUrl, async (client) => {
    const { rows } = await client.query<{ datname: string }>(
      'SELECT datname FROM pg_database WHERE datname = ANY($1) ORDER BY datname',
      [names],
    );
    return rows.map((row) => row.datname);
  });
}

async function roles(serverUrl: string, names: string[]): Promise<string[]> {
  return onServer(serverUrl, async (client) => {
    const { rows } = await client.query<{ rolname: string }>(
      'SELECT rolname FROM pg_roles WHERE rolname = ANY($1) ORDER BY rolname',
      [names],
    );
    return rows.map((row) => row.rolname);
  });
}

async function createRoles(serverUrl: string, names: string[]): Promise<void> {
  await onServer(serverUrl, async (client) => {
    for (const name of names) await client.query(`CREATE ROLE ${client.escapeIdentifier(name)}`);
  });
}

async function dropRoles(serverUrl: string, names: string[]): Promise<void> {
  await onServer(serverUrl, async (client) => {
    for (const name of names)
      await client.query(`DROP ROLE IF EXISTS ${client.escapeIdentifier(name)}`);
  });
}

describe('What killed test runs left behind', () => {
  const serverUrl = process.env.TEST_RUN_SERVER_URL!;
  const now = Date.now();
  const dead = deadPid();
  // A killed run of two hours ago, with a scratch database; one of two hours ago whose process
  // lives (this one); a killed run that started a minute ago.
  const killed = runDatabaseName(now - 2 * HOUR, dead);
  const killedScratch = `${killed}_replicas_0a1b2c3d`;
  const living = runDatabaseName(now - 2 * HOUR, process.pid);
  const recent = runDatabaseName(now - 60_000, dead);
  const all = [killed, killedScratch, living, recent].sort();

  beforeAll(async () => {
    for (const name of all) await createDatabase(serverUrl, name);
  });

  afterAll(async () => {
    for (const name of all) await dropDatabase(serverUrl, name);
  });

  it("drops a killed run's databases once CI's limit has passed, and no other", async () => {
    const dropped = await dropAbandonedRunDatabases(serverUrl, now);
    expect(dropped).toEqual(expect.arrayContaining([killed, killedScratch]));
    expect(dropped).not.toEqual(expect.arrayContaining([living]));
    expect(dropped).not.toEqual(expect.arrayContaining([recent]));
    expect(await databases(serverUrl, all)).toEqual([living, recent].sort());
    // This run's own database is in use.
    expect(await databases(serverUrl, [process.env.TEST_RUN_DATABASE_NAME!])).toHaveLength(1);
  });

  it("drops a killed run's roles once CI's limit has passed, and no other", async () => {
    const owner = `${killed}_privileges_0a1b2c3d_owner`;
    const others = [`${living}_privileges_0a1b2c3d_owner`, `${recent}_privileges_0a1b2c3d_owner`];
    await createRoles(serverUrl, [owner, ...others]);
    try {
      const dropped = await dropAbandonedRunRoles(serverUrl, now);
      expect(dropped).toEqual(expect.arrayContaining([owner]));
      expect(dropped).not.toEqual(expect.arrayContaining([others[0]]));
      expect(dropped).not.toEqual(expect.arrayContaining([others[1]]));
      expect(await roles(serverUrl, [owner, ...others])).toEqual([...others].sort());
    } finally {
      await dropRoles(serverUrl, [owner, ...others]);
    }
  });

  it('removes the embedded clusters no server runs in and nothing touched for that long', () => {
    const folder = mkdtempSync(join(tmpdir(), 'abandoned-runs-'));
    try {
      const cluster = (name: string, age: number, serverPid?: number) => {
        const directory = join(folder, name);
        mkdirSync(directory);
        writeFileSync(join(directory, 'PG_VERSION'), '18\n');
        if (serverPid !== undefined)
          writeFileSync(join(directory, 'postmaster.pid'), `${serverPid}\n${directory}\n`);
        const seconds = (now - age) / 1000;
        utimesSync(directory, seconds, seconds);
        return directory;
      };
      const old = ABANDONED_AFTER_MS + HOUR;
      const stopped = cluster(`${RUN_CLUSTER_PREFIX}stopped`, old);
      const crashed = cluster(`${RUN_CLUSTER_PREFIX}crashed`, old, dead);
      cluster(`${RUN_CLUSTER_PREFIX}serving`, old, process.pid);
      cluster(`${RUN_CLUSTER_PREFIX}fresh`, 60_000);
      cluster('someone-elses-pg-folder', old);

      expect(removeAbandonedClusters(now, folder).sort()).toEqual([crashed, stopped].sort());
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });

  it("removes the folders named after killed runs (temporary files, builds), by the databases' rule", () => {
    const folder = mkdtempSync(join(tmpdir(), 'abandoned-runs-'));
    try {
      for (const name of [killed, living, recent, 'gateway_test_notarun', 'someone-elses'])
        mkdirSync(join(folder, name));
      expect(removeAbandonedRunFolders(folder, now)).toEqual([join(folder, killed)]);
      expect(removeAbandonedRunFolders(join(folder, 'absent'), now)).toEqual([]);
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });

  it("drops a stopped run's databases and roles synchronously (as from a process that is exiting), and no other run's", async () => {
    const stopped = runDatabaseName(now, process.pid + 1_000_000);
    const names = [stopped, `${stopped}_replicas_0a1b2c3d`];
    // Another run's, of the same start and a pid that begins with this one's.
    const other = `${stopped}9`;
    // Roles named after the run (runtime-privileges.medium-spec.ts), one owning its scratch
    // database, and another run's.
    const runRoles = [`${stopped}_privileges_0a1b2c3d_owner`, `${stopped}_privileges_0a1b2c3d_app`];
    const otherRole = `${other}_privileges_0a1b2c3d_owner`;
    await createRoles(serverUrl, [...runRoles, otherRole]);
    for (const name of [...names, other]) await createDatabase(serverUrl, name);
    await onServer(serverUrl, (client) =>
      client.query(
        `ALTER DATABASE ${client.escapeIdentifier(names[1])} OWNER TO ${client.escapeIdentifier(runRoles[0])}`,
      ),
    );
    try {
      // The database of the URL given need not exist: the server's is used.
      dropRunDatabasesSync(withDatabase(serverUrl, 'absent'), stopped);
      expect(await databases(serverUrl, [...names, other])).toEqual([other]);
      expect(await roles(serverUrl, [...runRoles, otherRole])).toEqual([otherRole]);
    } finally {
      for (const name of [...names, other]) await dropDatabase(serverUrl, name);
      await dropRoles(serverUrl, [...runRoles, otherRole]);
    }
  });
});

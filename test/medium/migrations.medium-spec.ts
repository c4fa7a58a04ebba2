import { once } from 'node:events';
import { AddressInfo, createServer, Socket } from 'node:net';
import { Client } from 'pg';
import { DataSource, MigrationInterface, QueryRunner } from 'typeorm';
import {
  buildDataSourceOptions,
  buildMigrationDataSourceOptions,
  MIGRATION_LOCK_TIMEOUT_MS,
  MIGRATIONS,
} from '../../src/database/data-source-options';
import {
  describeMigrations,
  migrateDatabase,
  MigrationReport,
  runMigrations,
} from '../../src/database/migrate';
import { LockWaitEnded, MIGRATION_LOCK_ID } from '../../src/database/migration-lock';
import { migrateFromCommandLine, runMigrationCommand } from '../../src/database/migrate-command';
import { createDatabase, dropDatabase, scratchDatabaseName } from '../support/database';
import { eventually } from '../support/metrics';
import { within } from '../../src/common/within';
import { advisoryLockWaits, holdMigrationLock } from '../support/migration-lock';

/** SHOW statement_timeout on a connection made with `options`. */
async function statementTimeoutOf(options: ReturnType<typeof buildDataSourceOptions>) {
  const dataSource = await new DataSource(options).initialize();
  try {
    const [row] = await dataSource.query<{ statement_timeout: string }[]>('SHOW statement_timeout');
    return row.statement_timeout;
  } finally {
    await dataSource.destroy();
  }
}

/** What a migration command writes, line by line, and the writer that collects it. */
function commandOutput() {
  const stdout: string[] = [];
  const stderr: string[] = [];
  const write = {
    stdout: (line: string) => stdout.push(line),
    stderr: (line: string) => stderr.push(line),
  };
  return { stdout, stderr, write };
}

async function appliedMigrations(url: string): Promise<number> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ count: string }>('SELECT count(*) FROM migrations');
    return Number(rows[0].count);
  } finally {
    await client.end();
  }
}

class CreatesKept1700000000001 implements MigrationInterface {
  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('CREATE TABLE kept (id int)');
  }
  async down(): Promise<void> {}
}

class FailsHalfway1700000000002 implements MigrationInterface {
  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('CREATE TABLE half_done (id int)');
    await queryRunner.query('SELECT 1 / 0');
  }
  async down(): Promise<void> {}
}

/** Alters the table the give-way test holds a transaction on (it creates the table first). */
class AltersHeld1700000000003 implements MigrationInterface {
  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE held ADD COLUMN note text');
  }
  async down(): Promise<void> {}
}

/** How many sessions of the database `client` is on wait for an advisory lock. */
async function waitingSessions(client: Client): Promise<number> {
  const { rows } = await client.query<{ count: number }>(
    `SELECT count(*)::int AS count FROM pg_locks
      WHERE locktype = 'advisory' AND NOT granted
        AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
  );
  return rows[0].count;
}

async function tablesOf(url: string, names: string[]): Promise<string[]> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ name: string }>(
      'SELECT name FROM unnest($1::text[]) AS name WHERE to_regclass(name) IS NOT NULL ORDER BY name',
      [names],
    );
    return rows.map((row) => row.name);
  } finally {
    await client.end();
  }
}

/**
 * What the public schema holds, each object with its definition: relations, columns, constraints,
 * indexes, types, functions and triggers. Two equal lists are the same schema.
 */
async function schemaOf(url: string): Promise<string[]> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ entry: string }>(`
      SELECT format('relation %s %s', c.relname, c.relkind) AS entry
        FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'public'
      UNION ALL
      SELECT format('column %s.%s %s %s %s', table_name, column_name, data_type, is_nullable,
                    column_default)
        FROM information_schema.columns WHERE table_schema = 'public'
      UNION ALL
      SELECT format('constraint %s %s %s', conrelid::regclass, conname, pg_get_constraintdef(oid))
        FROM pg_constraint WHERE connamespace = 'public'::regnamespace
      UNION ALL
      SELECT 'index ' || indexdef FROM pg_indexes WHERE schemaname = 'public'
      UNION ALL
      SELECT 'type ' || typname FROM pg_type
        WHERE typnamespace = 'public'::regnamespace AND typtype IN ('e', 'd', 'c', 'r')
          AND typrelid = 0
      UNION ALL
      SELECT 'function ' || pg_get_functiondef(oid) FROM pg_proc
        WHERE pronamespace = 'public'::regnamespace
      UNION ALL
      SELECT 'trigger ' || pg_get_triggerdef(t.oid) FROM pg_trigger t
        JOIN pg_class c ON c.oid = t.tgrelid
        WHERE c.relnamespace = 'public'::regnamespace AND NOT t.tgisinternal
      ORDER BY 1`);
    return rows.map((row) => row.entry);
  } finally {
    await client.end();
  }
}

/** Applies the first `count` migrations (those not applied yet), each in its transaction. */
async function migrateTo(url: string, count: number): Promise<void> {
  const dataSource = await new DataSource({
    ...buildMigrationDataSourceOptions(url),
    migrations: MIGRATIONS.slice(0, count),
  }).initialize();
  try {
    await runMigrations(dataSource);
  } finally {
    await dataSource.destroy();
  }
}

describe('Migrating the schema (migrateDatabase: start-up, `npm run migration:run`, tests)', () => {
  const serverUrl = () => process.env.TEST_RUN_SERVER_URL!;
  let name: string;
  let url: string;

  beforeEach(async () => {
    name = scratchDatabaseName('migrate');
    url = await createDatabase(serverUrl(), name);
  });

  afterEach(async () => {
    await dropDatabase(serverUrl(), name);
  });

  it('migrates on connections without the statement timeout the app answers under', async () => {
    expect(await statementTimeoutOf(buildDataSourceOptions(url))).toBe('15s');
    expect(await statementTimeoutOf(buildMigrationDataSourceOptions(url))).toBe('0');
  });

  it('waits for the migration lock held by a replica that is migrating, then migrates', async () => {
    const replica = await holdMigrationLock(url);
    let settled = false;
    const migrating = migrateDatabase(url).finally(() => (settled = true));

    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(settled).toBe(false);
    const { rows } = await replica.query<{ exists: boolean }>(
      "SELECT to_regclass('public.migrations') IS NOT NULL AS exists",
    );
    expect(rows[0].exists).toBe(false);

    await replica.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_ID]);
    await replica.end();
    const { applied, unknown } = await migrating;
    expect(applied.length).toBeGreaterThan(10);
    expect(unknown).toEqual([]);
    expect(await appliedMigrations(url)).toBe(applied.length);
  });

  // Replicas starting together on a fresh database: one migrates, the other waits for the lock in
  // a statement. An index built CONCURRENTLY waited for that statement's transaction, which
  // waited for the build: neither replica started (CI's two-process e2e, 2026-12-05).
  it('migrates a fresh database from two replicas at once: one applies everything, both finish', async () => {
    const stuck = new Promise<never>((_, reject) =>
      setTimeout(
        () => reject(new Error('the two replicas did not finish in 60 s')),
        60_000,
      ).unref(),
    );
    const [first, second] = await Promise.race([
      Promise.all([migrateDatabase(url), migrateDatabase(url)]),
      stuck,
    ]);
    expect(first.applied.length + second.applied.length).toBe(MIGRATIONS.length);
    expect(await appliedMigrations(url)).toBe(MIGRATIONS.length);
  }, 120_000);

  // A replica starting during a long migration (ItemStore moves a whole table) waited without a
  // word, and looked hung. Now: a line when the wait begins, one every reportEveryMs (30 s at
  // start-up) while it lasts, one when the lock is taken.
  it('says that it waits for the lock another replica holds, again while it waits, and when it takes it', async () => {
    const replica = await holdMigrationLock(url);
    const lines: string[] = [];
    const migrating = migrateDatabase(url, undefined, {
      report: (line) => lines.push(line),
      reportEveryMs: 200,
    });

    try {
      await eventually(async () => expect(lines.length).toBeGreaterThanOrEqual(2));
      expect(lines[0]).toBe(
        'waiting for the migration lock held by another replica (or npm run migration:run); ' +
          'going on once it is released',
      );
      expect(lines[1]).toMatch(
        /^still waiting for the migration lock held by another replica \(\d+ s\)$/,
      );
    } finally {
      // Its session ends, and the lock with it, whatever failed above: the migration goes on.
      await replica.end();
    }
    expect((await migrating).applied.length).toBeGreaterThan(10);
    expect(lines.at(-1)).toMatch(/^took the migration lock after waiting \d+ s$/);
    // Nothing more once the lock is taken: the reminder stopped.
    const said = lines.length;
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(lines).toHaveLength(said);
  });

  // A migration waiting on a client's lock held the start without a word (a configuration
  // audit: `LOCK TABLE migrations` in another session, 44 s of silence).
  // Also under an application_name of the URL's, which pg lets win over the pool's (a review's
  // finding: the migrating session was looked for by the pool's name alone).
  it.each([
    ['its own name', () => url],
    ['a name the URL gives', () => `${url}${url.includes('?') ? '&' : '?'}application_name=ops`],
  ])(
    'says what lock the migrating session waits for and who holds it, while it waits (%s)',
    async (_name, urlOf) => {
      const target = urlOf();
      await migrateDatabase(target);
      const { holder, pid } = await lockedMigrationsTable(target);
      const lines: string[] = [];
      let migrating: Promise<unknown> | undefined;
      try {
        migrating = migrateDatabase(target, undefined, {
          report: (line) => lines.push(line),
          reportEveryMs: 200,
        });
        await eventually(async () => expect(lines.length).toBeGreaterThanOrEqual(1));
        expect(lines[0]).toMatch(
          new RegExp(
            `^migrating has waited \\d+ s: a lock on migrations, held by session ${pid} ` +
              '\\(pg_stat_activity says what it runs; .*\\); going on once it is released$',
          ),
        );
      } finally {
        await holder.end();
      }
      await migrating;
    },
  );

  // A cold-start audit: the start's read of the migrations table was outside the giving way, so
  // a client holding the table longer than the lock timeout (`VACUUM FULL`, `LOCK TABLE`)
  // failed every start, with a stack.
  it('gives way to a client holding the migrations table, and migrates once it lets go', async () => {
    await migrateDatabase(url);
    const { holder } = await lockedMigrationsTable(url);
    const lines: string[] = [];
    let migrating: Promise<MigrationReport> | undefined;
    try {
      migrating = migrateDatabase(url, undefined, {
        report: (line) => lines.push(line),
        reportEveryMs: 60_000,
      });
      await eventually(async () => expect(lines.join('\n')).toMatch(/gave way/), 15_000);
      expect(lines[0]).toBe(
        `reading the migrations table waited ${MIGRATION_LOCK_TIMEOUT_MS / 1000} s for its lock ` +
          '(another client holds the table) and gave way; trying again in 1 s',
      );
      await holder.query('COMMIT');
      expect((await migrating).applied).toEqual([]);
    } finally {
      await holder.end();
      await migrating?.catch(() => undefined);
    }
  }, 30_000);

  // A rolling-upgrade audit: an ALTER TABLE waiting behind a client's 45 s transaction put every
  // replica's queries on that table in the queue behind it, then filled their pools: 503s for
  // 46 s on endpoints that never read the table. The migration now gives way and tries again.
  // Its own migration and table: it relied on the newest of the project's altering the table it
  // held, and the next migration added to the project, on another table, failed it with an
  // empty message (a contributor audit).
  it("gives way to a client's transaction on a table it alters, so that others' queries do not queue behind it, then migrates", async () => {
    const holder = new Client({ connectionString: url });
    const reader = new Client({ connectionString: url });
    await holder.connect();
    await reader.connect();
    const dataSource = await new DataSource({
      // Giving way, as migrateDatabase's.
      ...buildMigrationDataSourceOptions(url, undefined, true),
      migrations: [AltersHeld1700000000003],
    }).initialize();
    const lines: string[] = [];
    let migrating: Promise<string[]> | undefined;
    try {
      await holder.query('CREATE TABLE held (id int)');
      await holder.query('BEGIN');
      await holder.query('SELECT count(*) FROM held');
      migrating = runMigrations(dataSource, {
        report: (line) => lines.push(line),
        reportEveryMs: 60_000,
      });
      await eventually(async () => expect(lines.join('\n')).toMatch(/gave way/));
      expect(lines[0]).toBe(
        `a migration waited ${MIGRATION_LOCK_TIMEOUT_MS / 1000} s for a table's lock (a long ` +
          'transaction of another client, or a replica of an older release, holds it) and gave ' +
          "way, so that the service's queries do not queue behind it; trying again in 1 s",
      );
      // Behind a migration that waited for good, this read waited until the transaction ended,
      // which is only after it (the finally below): it timed out.
      await within(reader.query('SELECT count(*) FROM held'), 15_000);
      await holder.end();
      expect(await migrating).toEqual(['AltersHeld1700000000003']);
    } finally {
      await holder.end().catch(() => undefined);
      await reader.end();
      await migrating?.catch(() => undefined);
      await dataSource.destroy();
    }
  }, 30_000);

  // A shutdown signal at start-up ends the wait (gateway.ts). Left to the process's exit, its
  // session stayed queued for the lock, and took it, after the process was gone.
  it('ends a wait for the lock when told to, cancelling it: nothing migrated, no session left waiting', async () => {
    const replica = new Client({ connectionString: url });
    await replica.connect();
    try {
      await replica.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_ID]);
      let end: ((reason: string) => void) | undefined;
      let over = false;
      const migrating = migrateDatabase(url, undefined, {
        report: () => undefined,
        onWait: (ending) => {
          end = ending;
          return () => (over = true);
        },
      });
      await eventually(async () => expect(await waitingSessions(replica)).toBe(1));
      expect(over).toBe(false);

      end!('SIGTERM');
      const failure: unknown = await migrating.catch((error: unknown) => error);

      expect(failure).toBeInstanceOf(LockWaitEnded);
      expect((failure as Error).message).toBe(
        'SIGTERM while waiting for the migration lock: stopped, nothing migrated',
      );
      expect(over).toBe(true);
      expect(await waitingSessions(replica)).toBe(0);
      expect(await tablesOf(url, ['migrations'])).toEqual([]);
    } finally {
      await replica.end();
    }
  });

  // Without autovacuum the index's dead rows grow the database, and nothing said so (a soak
  // audit's finding): the start warns (describeMigrations). This server's setting decides.
  it('reports whether the server vacuums on its own, as SHOW autovacuum says', async () => {
    const client = new Client({ connectionString: url });
    await client.connect();
    try {
      const { rows } = await client.query<{ autovacuum: string }>('SHOW autovacuum');
      expect((await migrateDatabase(url)).autovacuumOff).toBe(rows[0].autovacuum !== 'on');
    } finally {
      await client.end();
    }
  });

  it('says nothing of a lock that no one holds', async () => {
    const lines: string[] = [];
    await migrateDatabase(url, undefined, { report: (line) => lines.push(line) });
    expect(lines).toEqual([]);
  });

  // A migration that fails half-way must leave nothing behind: the next start runs it again from
  // its first statement ("relation already exists" otherwise, and a service that cannot start).
  // Those before it stay applied.
  it('runs each migration in a transaction of its own', async () => {
    const dataSource = new DataSource({
      ...buildMigrationDataSourceOptions(url),
      migrations: [CreatesKept1700000000001, FailsHalfway1700000000002],
    });
    await dataSource.initialize();
    // TypeORM prints the failure itself (console.log), which this test expects.
    const printed = jest.spyOn(console, 'log').mockImplementation(() => undefined);
    try {
      await expect(runMigrations(dataSource)).rejects.toThrow('division by zero');
    } finally {
      printed.mockRestore();
      await dataSource.destroy();
    }
    expect(await tablesOf(url, ['kept', 'half_done'])).toEqual(['kept']);
    const client = new Client({ connectionString: url });
    await client.connect();
    const { rows } = await client.query<{ name: string }>('SELECT name FROM migrations');
    await client.end();
    expect(rows.map((row) => row.name)).toEqual(['CreatesKept1700000000001']);
  });

  // Every down() is checked: reverting a migration gives back the schema from before it (`npm
  // run migration:revert`, each in its transaction), down to TypeORM's migrations table alone,
  // and migrating again gives the schema migrating gave the first time. MinerIndex's left
  // aggregates_version, and migrating again failed half-way: relation "aggregates_version"
  // already exists.
  it('reverts each migration to the schema before it, and migrates again to the same schema', async () => {
    const schemas: string[][] = [];
    for (let count = 0; count <= MIGRATIONS.length; count++) {
      await migrateTo(url, count);
      schemas.push(await schemaOf(url));
    }

    const dataSource = await new DataSource(buildMigrationDataSourceOptions(url)).initialize();
    // Each down() whose result differs, with what it left and what it lost.
    const differences: { migration: string; left: string[]; lost: string[] }[] = [];
    try {
      for (let count = MIGRATIONS.length; count > 0; count--) {
        await dataSource.undoLastMigration({ transaction: 'each' });
        const [schema, expected] = [await schemaOf(url), schemas[count - 1]];
        const left = schema.filter((entry) => !expected.includes(entry));
        const lost = expected.filter((entry) => !schema.includes(entry));
        if (left.length + lost.length > 0)
          differences.push({ migration: MIGRATIONS[count - 1].name, left, lost });
      }
    } finally {
      await dataSource.destroy();
    }
    expect(differences).toEqual([]);
    expect(await appliedMigrations(url)).toBe(0);
    expect(await schemaOf(url)).toEqual(schemas[0]);

    expect((await migrateDatabase(url)).applied).toHaveLength(MIGRATIONS.length);
    expect(await schemaOf(url)).toEqual(schemas[MIGRATIONS.length]);
    // Every migration is applied, reverted and applied again: about 40 s on a loaded machine.
  }, 180_000);

  it('from the command line: prints what it applied, then that the schema is up to date, and exits 0', async () => {
    const { stdout, write } = commandOutput();
    expect(await runMigrationCommand([], { DATABASE_URL: url }, write)).toBe(0);
    expect(await runMigrationCommand([], { DATABASE_URL: url }, write)).toBe(0);
    expect(stdout).toEqual([
      expect.stringMatching(
        /^migrations applied: InitialSchema1763700000000, RepoNames1763800000000, /,
      ),
      'migrations applied: none (the schema is up to date)',
    ]);
  });

  it('from the command line: says on stderr that it waits for the lock a replica holds', async () => {
    const replica = await holdMigrationLock(url);
    const { stdout, stderr, write } = commandOutput();
    const status = runMigrationCommand([], { DATABASE_URL: url }, write);
    try {
      await eventually(async () =>
        expect(stderr).toEqual([
          expect.stringMatching(/^waiting for the migration lock held by another replica/),
        ]),
      );
    } finally {
      await replica.end();
    }
    expect(await status).toBe(0);
    expect(stderr[1]).toMatch(/^took the migration lock after waiting \d+ s$/);
    expect(stdout).toEqual([expect.stringMatching(/^migrations applied: InitialSchema/)]);
  });

  // A Job stopped at its deadline, a CI cancel, a Ctrl-C: the wait's query was left queued for
  // the lock, and took it once free, for a process gone (a CLI audit).
  it('from the command line: ends a wait for the lock on a signal, its query cancelled, 128 + the signal', async () => {
    const replica = await holdMigrationLock(url);
    const { stderr, write } = commandOutput();
    let endWait: ((reason: string) => void) | undefined;
    try {
      const status = runMigrationCommand([], { DATABASE_URL: url }, write, (end) => {
        endWait = end;
        return () => (endWait = undefined);
      });
      await eventually(async () => expect(endWait).toBeDefined());
      endWait!('SIGTERM');
      expect(await status).toBe(143);
      expect(stderr.at(-1)).toBe(
        'SIGTERM while waiting for the migration lock: stopped, nothing migrated',
      );
      expect(await advisoryLockWaits(replica)).toBe(0);
    } finally {
      await replica.end();
    }
  });

  it('from the command line: reverts the last migration under the lock a replica holds, then says which', async () => {
    await migrateDatabase(url);
    const applied = await appliedMigrations(url);
    const replica = await holdMigrationLock(url);
    const { stdout, stderr, write } = commandOutput();
    const status = runMigrationCommand(['--revert'], { DATABASE_URL: url }, write);
    try {
      await eventually(async () =>
        expect(stderr).toEqual([
          expect.stringMatching(/^waiting for the migration lock held by another replica/),
        ]),
      );
      // Still waiting: nothing reverted while the replica migrates.
      expect(await appliedMigrations(url)).toBe(applied);
    } finally {
      await replica.end();
    }
    expect(await status).toBe(0);
    expect(stdout).toEqual([`migration reverted: ${MIGRATIONS[applied - 1].name}`]);
    expect(await appliedMigrations(url)).toBe(applied - 1);
    expect(await runMigrationCommand([], { DATABASE_URL: url }, write)).toBe(0);
    expect(await appliedMigrations(url)).toBe(applied);
  });

  // A deployment that migrates as a step of its own must stop when the step failed.
  it('from the command line: exits 1 naming DATABASE_URL, without its password, when the database cannot be reached', async () => {
    const { stdout, stderr, write } = commandOutput();
    const status = await runMigrationCommand(
      [],
      { DATABASE_URL: 'postgres://gateway:hunter2-secret@127.0.0.1:1/gateway' },
      write,
    );
    expect(status).toBe(1);
    expect(stdout).toEqual([]);
    expect(stderr).toEqual([
      expect.stringMatching(
        /^migration failed: cannot use the database of DATABASE_URL=postgres:\/\/gateway:\*\*\*@127\.0\.0\.1:1\/gateway: .*ECONNREFUSED.* \(what was applied before stays applied\)$/,
      ),
    ]);
  });

  // DATABASE_CONNECT_TIMEOUT_MS is the operator's bound on a slow network, for the CLI as well.
  it('from the command line: gives up connecting after DATABASE_CONNECT_TIMEOUT_MS', async () => {
    // A server that accepts the connection and never answers, as a Postgres behind a dead link.
    const sockets: Socket[] = [];
    const silent = createServer((socket) => sockets.push(socket)).listen(0, '127.0.0.1');
    await once(silent, 'listening');
    const { port } = silent.address() as AddressInfo;
    try {
      const started = Date.now();
      await expect(
        migrateFromCommandLine({
          DATABASE_URL: `postgres://postgres@127.0.0.1:${port}/none`,
          DATABASE_CONNECT_TIMEOUT_MS: '300',
        }),
      ).rejects.toThrow(/timeout/i);
      expect(Date.now() - started).toBeLessThan(3000);
    } finally {
      for (const socket of sockets) socket.destroy();
      silent.close();
    }
  });

  it('from the command line: applies what is pending, then nothing; refuses without DATABASE_URL', async () => {
    const { applied } = await migrateFromCommandLine({ DATABASE_URL: url });
    expect(applied.length).toBeGreaterThan(10);
    // In production too, with nothing else the service needs to run.
    expect(
      await migrateFromCommandLine({ NODE_ENV: 'production', DATABASE_URL: url }),
    ).toMatchObject({ applied: [], unknown: [] });
    expect(await appliedMigrations(url)).toBe(applied.length);

    // A newer release's migration: named, so that an operator who went back knows to revert it.
    const client = new Client({ connectionString: url });
    await client.connect();
    await client.query(
      "INSERT INTO migrations (timestamp, name) VALUES (1799999999999, 'FromTheFuture1799999999999')",
    );
    await client.end();
    const newer = await migrateFromCommandLine({ DATABASE_URL: url });
    expect(newer).toMatchObject({ applied: [], unknown: ['FromTheFuture1799999999999'] });
    expect(describeMigrations(newer).warn).toMatch(
      /^the database has migrations this release does not know \(FromTheFuture1799999999999\): a newer release ran them/,
    );

    await expect(migrateFromCommandLine({})).rejects.toThrow(
      'DATABASE_URL must be set to run migrations from the CLI',
    );
  });
});

/** A client's session holding the migrations table (`LOCK TABLE`) until it commits or ends. */
async function lockedMigrationsTable(target: string): Promise<{ holder: Client; pid: number }> {
  const holder = new Client({ connectionString: target });
  await holder.connect();
  try {
    await holder.query('BEGIN');
    await holder.query('LOCK TABLE migrations IN ACCESS EXCLUSIVE MODE');
    const {
      rows: [{ pid }],
    } = await holder.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
    return { holder, pid };
  } catch (error) {
    await holder.end();
    throw error;
  }
}

import { Client } from 'pg';
import { migrateDatabase } from '../../src/database/migrate';
import { UnusableDatabase } from '../../src/common/lifecycle/startup-failure';
import { dropDatabase, onServer, scratchDatabaseName } from '../support/database';

/**
 * The role the service connects as, on a database migrated by its owner (a hosted-Postgres
 * audit): one granted only the rows is refused at start, in one line that says what it lacks;
 * one granted the owner's role runs.
 */
describe('the privileges the service needs at run time', () => {
  const serverUrl = process.env.TEST_RUN_SERVER_URL!;
  const name = scratchDatabaseName('privileges');
  const owner = `${name}_owner`;
  const app = `${name}_app`;
  const as = (role: string) => {
    const url = new URL(serverUrl);
    url.username = role;
    url.password = '';
    url.pathname = `/${name}`;
    return url.toString();
  };

  beforeAll(async () => {
    await onServer(serverUrl, async (client) => {
      await client.query(`CREATE ROLE "${owner}" LOGIN NOSUPERUSER NOCREATEDB`);
      await client.query(`CREATE ROLE "${app}" LOGIN NOSUPERUSER NOCREATEDB`);
      // The database's owner creates in its `public` schema (Postgres 15 on).
      await client.query(`CREATE DATABASE "${name}" OWNER "${owner}"`);
    });
    await migrateDatabase(as(owner));
    const client = new Client({ connectionString: as(owner) });
    await client.connect();
    try {
      await client.query(`GRANT USAGE ON SCHEMA public TO "${app}"`);
      await client.query(
        `GRANT SELECT, INSERT, UPDATE, DELETE, TRUNCATE ON ALL TABLES IN SCHEMA public TO "${app}"`,
      );
      await client.query(`GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public TO "${app}"`);
    } finally {
      await client.end();
    }
  });
  afterAll(async () => {
    await dropDatabase(serverUrl, name);
    await onServer(serverUrl, async (client) => {
      for (const role of [app, owner]) await client.query(`DROP ROLE IF EXISTS "${role}"`);
    });
  });

  it('refuses a role granted only the rows, naming what it lacks', async () => {
    const refusal = await migrateDatabase(as(app)).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(refusal).toBeInstanceOf(UnusableDatabase);
    expect((refusal as Error).message).toBe(
      `the database role cannot run the gateway (miner_index is owned by ${owner}; stored_items ` +
        `is owned by ${owner}; no CREATE on schema public): it creates and drops partitions of ` +
        "miner_index and stored_items while it runs, which Postgres allows only to the tables' " +
        'owner, with CREATE on their schema. Connect as the role that ran the migrations, or ' +
        'grant that role to this one (README, "Database privileges")',
    );
  });

  it("runs as a role granted the owner's", async () => {
    await onServer(serverUrl, (client) => client.query(`GRANT "${owner}" TO "${app}"`));
    await expect(migrateDatabase(as(app))).resolves.toMatchObject({ applied: [] });
  });
});

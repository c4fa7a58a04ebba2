// Drops a test run's database and its scratch databases (`<run>_…`), then the roles named after
// the run (`<run>_…`, runtime-privileges.medium-spec.ts), as a process of its own: run by
// abandoned-runs.ts `dropRunDatabasesSync` from a jest process that is exiting, where nothing can
// be awaited. SERVER_URL names the server, RUN the run's database. Roles belong to the whole
// server, not to a database: a run stopped before its spec's own afterAll left them for good.
'use strict';
const { Client } = require('pg');

// Stopping the run is what started this: a repeated Ctrl-C must not cut it short.
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, () => undefined);

async function main() {
  const client = new Client({
    connectionString: process.env.SERVER_URL,
    connectionTimeoutMillis: 3000,
  });
  await client.connect();
  try {
    const { rows } = await client.query(
      `SELECT datname FROM pg_database WHERE datname = $1 OR starts_with(datname, $1 || '_')
       ORDER BY datname DESC`,
      [process.env.RUN],
    );
    for (const { datname } of rows)
      await client.query(
        `DROP DATABASE IF EXISTS ${client.escapeIdentifier(datname)} WITH (FORCE)`,
      );
    // After the databases, which a role may own.
    const roles = await client.query(
      `SELECT rolname FROM pg_roles WHERE starts_with(rolname, $1 || '_') ORDER BY rolname`,
      [process.env.RUN],
    );
    for (const { rolname } of roles.rows)
      await client.query(`DROP ROLE IF EXISTS ${client.escapeIdentifier(rolname)}`);
  } finally {
    await client.end();
  }
}

main().catch((error) => {
  process.stderr.write(`could not drop the databases of the stopped test run: ${error.message}\n`);
  process.exitCode = 1;
});

import { Client } from 'pg';

/**
 * Administration of a Postgres server (not of one database): creating and dropping the
 * throwaway databases the tests and benchmarks run against.
 */

export function withDatabase(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}

/** Runs statements against the maintenance database of the server behind `url`. */
export async function onServer<T>(url: string, work: (client: Client) => Promise<T>): Promise<T> {
  const client = new Client({
    connectionString: withDatabase(url, 'postgres'),
    connectionTimeoutMillis: 3000,
  });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/**
 * `settings`: what follows the name in CREATE DATABASE (a template, encoding and locale), for a
 * test of a database made otherwise than the server's default; SQL from the test, not a user.
 */
export async function createDatabase(
  serverUrl: string,
  name: string,
  settings = '',
): Promise<string> {
  await onServer(serverUrl, (client) =>
    client.query(`CREATE DATABASE ${client.escapeIdentifier(name)} ${settings}`),
  );
  return withDatabase(serverUrl, name);
}

/** FORCE: an app that was just stopped or killed may still hold connections for a moment. */
export async function dropDatabase(serverUrl: string, name: string): Promise<void> {
  await onServer(serverUrl, (client) =>
    client.query(`DROP DATABASE IF EXISTS ${client.escapeIdentifier(name)} WITH (FORCE)`),
  );
}

export async function isReachable(url: string): Promise<boolean> {
  try {
    await onServer(url, (client) => client.query('SELECT 1'));
    return true;
  } catch {
    return false;
  }
}

import { Client } from 'pg';

/** The server used by this test run, as published by the global setup to every worker. */
export function testDatabaseUrl(): string {
  const url = process.env.TEST_RUN_DATABASE_URL;
  if (!url)
    throw new Error('TEST_RUN_DATABASE_URL is not set: run the tests through jest (global setup)');
  return url;
}

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

export async function createDatabase(serverUrl: string, name: string): Promise<string> {
  await onServer(serverUrl, (client) =>
    client.query(`CREATE DATABASE ${client.escapeIdentifier(name)}`),
  );
  return withDatabase(serverUrl, name);
}

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

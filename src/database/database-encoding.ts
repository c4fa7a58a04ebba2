import { UnusableDatabase } from '../common/lifecycle/startup-failure';

/**
 * Refuses, before anything is migrated, a database whose encoding is not UTF8. Miners' posts,
 * labels and names are in every script: in LATIN1 one emoji failed the whole statement holding
 * it (a delivery, a task's page of items, an index sync), and in SQL_ASCII `varchar(140)`
 * counted bytes, refusing a 60-character CJK label the service had accepted (a collation audit).
 * The migrations ran on both, so nothing said so until the first such text came.
 */
export async function checkDatabaseEncoding(
  query: (sql: string) => Promise<{ server_encoding: string }[]>,
): Promise<void> {
  const [row] = await query('SHOW server_encoding');
  const refusal = unsupportedEncoding(row.server_encoding);
  if (refusal) throw refusal;
}

/** The refusal of a database encoded otherwise than in UTF8; undefined for UTF8. */
export function unsupportedEncoding(encoding: string): UnusableDatabase | undefined {
  if (encoding === 'UTF8') return undefined;
  return new UnusableDatabase(
    `the database's encoding is ${encoding}: the gateway stores text of every script and needs ` +
      "a database in UTF8 (CREATE DATABASE … ENCODING 'UTF8' TEMPLATE template0; README, " +
      '"Quick start")',
  );
}

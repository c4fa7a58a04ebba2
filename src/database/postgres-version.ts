import { UnusableDatabase } from '../common/lifecycle/startup-failure';

/**
 * The oldest Postgres the migrations run on: `UNIQUE NULLS NOT DISTINCT` (MinerCalls,
 * ItemStore) is 15's, gen_random_uuid() without pgcrypto 13's. On 13 or 14 the first start
 * failed half-way through migrating, with a syntax error (an operator's audit).
 */
export const MINIMUM_POSTGRES_MAJOR = 15;

/**
 * The refusal of a server whose `server_version_num` is older than MINIMUM_POSTGRES_MAJOR,
 * naming the version found and the one required; undefined for one new enough.
 */
export function unsupportedPostgres(serverVersionNum: number): UnusableDatabase | undefined {
  if (serverVersionNum >= MINIMUM_POSTGRES_MAJOR * 10_000) return undefined;
  return new UnusableDatabase(
    `PostgreSQL ${versionName(serverVersionNum)} (server_version_num ${serverVersionNum}) is too ` +
      `old: the gateway needs PostgreSQL ${MINIMUM_POSTGRES_MAJOR} or later`,
  );
}

/**
 * Refuses, before anything is migrated, a server older than the migrations need. `query` runs
 * SQL on the connection that is about to migrate.
 */
export async function checkPostgresVersion(
  query: (sql: string) => Promise<{ server_version_num: string }[]>,
): Promise<void> {
  const [row] = await query('SHOW server_version_num');
  const refusal = unsupportedPostgres(Number(row.server_version_num));
  if (refusal) throw refusal;
}

/** 140012 as 14.12; before 10, three parts: 90624 as 9.6.24. */
function versionName(serverVersionNum: number): string {
  const major = Math.floor(serverVersionNum / 10_000);
  if (major >= 10) return `${major}.${serverVersionNum % 10_000}`;
  return `${major}.${Math.floor(serverVersionNum / 100) % 100}.${serverVersionNum % 100}`;
}

import { UnusableDatabase } from '../common/lifecycle/startup-failure';

/**
 * The tables whose partitions the service creates and drops while it runs: a miner's partition
 * of `miner_index` at its first index (and its lookup index, dropped and built at each sync), a
 * day's of `stored_items` as items arrive, dropped as they age out.
 */
const PARTITIONED_TABLES = ['miner_index', 'stored_items'];

interface TablePrivileges {
  table: string;
  schema: string;
  owner: string;
  owns: boolean;
  creates: boolean;
}

/**
 * Refuses, once the schema is migrated, a role that could not run the index sync or store items:
 * Postgres lets only a table's owner (or a member of its role) create its partitions, and only in
 * a schema the role may create in. A role granted just the rows, as a least-privilege set-up
 * grants them, started and served, and every index sync failed for every miner ("permission
 * denied for schema public", then "must be owner of table miner_index"), each miner's index
 * call spent, and health said healthy (a hosted-Postgres audit). README, "Database privileges".
 */
export async function checkRuntimePrivileges(
  query: (sql: string, parameters: unknown[]) => Promise<TablePrivileges[]>,
): Promise<void> {
  const tables = await query(
    `SELECT c.relname AS "table", n.nspname AS "schema", pg_get_userbyid(c.relowner) AS owner,
       pg_has_role(current_user, c.relowner, 'USAGE') AS owns,
       has_schema_privilege(c.relnamespace, 'CREATE') AS creates
     FROM unnest($1::text[]) AS wanted(name)
     JOIN pg_class c ON c.oid = to_regclass(wanted.name)
     JOIN pg_namespace n ON n.oid = c.relnamespace
     ORDER BY c.relname`,
    [PARTITIONED_TABLES],
  );
  const missing = [
    ...tables.filter((row) => !row.owns).map((row) => `${row.table} is owned by ${row.owner}`),
    ...[...new Set(tables.filter((row) => !row.creates).map((row) => row.schema))].map(
      (schema) => `no CREATE on schema ${schema}`,
    ),
  ];
  if (missing.length === 0) return;
  throw new UnusableDatabase(
    `the database role cannot run the gateway (${missing.join('; ')}): it creates and drops ` +
      `partitions of ${PARTITIONED_TABLES.join(' and ')} while it runs, which Postgres allows ` +
      "only to the tables' owner, with CREATE on their schema. Connect as the role that ran the " +
      'migrations, or grant that role to this one (README, "Database privileges")',
  );
}

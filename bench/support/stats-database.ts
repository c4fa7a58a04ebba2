import { performance } from 'node:perf_hooks';
import { Client } from 'pg';
import { progress } from './report';

/** pg_stat_user_tables of one aggregate table: live and dead rows, updates and deletes. */
interface ChurnRow {
  relname: string;
  live: string;
  dead: string;
  upd: string;
}

/** What bench:stats reports of the database once the index is loaded. */
export interface DatabaseFacts {
  /** The aggregates' churn before VACUUM. */
  churn: ChurnRow[];
  vacuumSeconds: number;
  /** SELECT count(*) FROM miner_index. */
  count: number;
  sizes: { name: string; bytes: number }[];
  settings: { name: string; setting: string }[];
}

/**
 * How much the per-miner aggregate writes churned the small tables (dead rows until vacuum), then
 * VACUUM ANALYZE (stable plans and a visibility map for the GROUP BY baseline; not part of the
 * ingest), then the rows, sizes and the server settings the figures depend on.
 */
export async function readDatabaseFacts(client: Client): Promise<DatabaseFacts> {
  const churn = (
    await client.query<ChurnRow>(
      `SELECT relname, n_live_tup AS live, n_dead_tup AS dead, n_tup_upd + n_tup_del AS upd
       FROM pg_stat_user_tables WHERE relname IN ('label_totals', 'bucket_totals') ORDER BY relname`,
    )
  ).rows;

  const vacuumStarted = performance.now();
  progress('VACUUM ANALYZE (stable plans and visibility map for the GROUP BY; not ingest)');
  await client.query('VACUUM ANALYZE');
  const vacuumSeconds = (performance.now() - vacuumStarted) / 1000;
  const [{ count }] = (await client.query<{ count: string }>('SELECT count(*) FROM miner_index'))
    .rows;
  const sizes = (
    await client.query<{ name: string; bytes: string }>(
      `SELECT 'database' AS name, pg_database_size(current_database()) AS bytes
       UNION ALL SELECT 'miner_index heap', sum(pg_relation_size(relid)) FROM pg_partition_tree('miner_index') WHERE isleaf
       UNION ALL SELECT 'miner_index indexes', sum(pg_indexes_size(relid)) FROM pg_partition_tree('miner_index') WHERE isleaf
       UNION ALL SELECT 'miner totals', pg_total_relation_size('miner_label_arrays') + pg_total_relation_size('miner_bucket_totals')
       UNION ALL SELECT 'aggregates', pg_total_relation_size('label_totals') + pg_total_relation_size('bucket_totals') + pg_total_relation_size('labels')`,
    )
  ).rows.map((row) => ({ name: row.name, bytes: Number(row.bytes) }));
  const settings = (
    await client.query<DatabaseFacts['settings'][number]>(
      `SELECT name, current_setting(name) AS setting FROM pg_settings WHERE name IN
       ('server_version', 'shared_buffers', 'work_mem', 'max_parallel_workers_per_gather',
        'synchronous_commit', 'max_wal_size', 'jit') ORDER BY name`,
    )
  ).rows;
  return { churn, vacuumSeconds, count: Number(count), sizes, settings };
}

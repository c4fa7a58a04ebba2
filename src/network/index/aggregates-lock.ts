import { EntityManager } from 'typeorm';

/** Arbitrary constant shared by every writer of the stats aggregates. */
const AGGREGATES_LOCK_ID = 7_013_000_002;

/**
 * Serializes transactions that write the aggregates (index replaces, credibility changes):
 * they touch overlapping rows in different orders and would otherwise deadlock. Readers are
 * never blocked. Released at commit or rollback.
 */
export async function lockAggregates(manager: EntityManager): Promise<void> {
  await manager.query('SELECT pg_advisory_xact_lock($1)', [AGGREGATES_LOCK_ID]);
  // Whoever takes the lock is about to change the totals: readers' caches must move on.
  await manager.query('UPDATE aggregates_version SET version = version + 1 WHERE id = 1');
}

import { DataSource } from 'typeorm';
import { DAY_MS } from '../../common/clock/durations';

const HOURS_PER_DAY = 24;
/** Creating or dropping a partition locks the parent: never queue behind a long query for it. */
const PARTITION_LOCK_TIMEOUT = '5s';

/** The day (since the epoch, UTC) an hour bucket falls in: the partition that holds it. */
export function dayOfBucket(timeBucket: number): number {
  return Math.floor(timeBucket / HOURS_PER_DAY);
}

/** `stored_items_YYYYMMDD`, as the ItemStore migration names the partitions it creates. */
export function partitionName(day: number): string {
  const date = new Date(day * DAY_MS).toISOString().slice(0, 10).replaceAll('-', '');
  return `stored_items_${date}`;
}

/**
 * The daily partitions of `stored_items`: created on demand before an insert (each in its own
 * short statement, as for the miner index: creating one locks the parent table) and dropped
 * whole past the retention horizon. Days known to exist are remembered; another replica may
 * drop one meanwhile, which the store notices on insert (see `forget`).
 */
export class ItemPartitionsRepository {
  private readonly known = new Set<number>();

  constructor(private readonly dataSource: DataSource) {}

  async ensure(days: Iterable<number>): Promise<void> {
    for (const day of days) {
      if (this.known.has(day)) continue;
      if (!Number.isSafeInteger(day)) throw new Error(`invalid partition day ${day}`);
      const from = day * HOURS_PER_DAY;
      await this.withLockTimeout(
        `CREATE TABLE IF NOT EXISTS ${partitionName(day)} PARTITION OF stored_items
           FOR VALUES FROM (${from}) TO (${from + HOURS_PER_DAY})`,
      ).catch((error: { code?: string }) => {
        // Another replica created it between our check and our statement.
        if (error.code !== '42P07' && error.code !== '23505') throw error;
      });
      this.known.add(day);
    }
  }

  /** After an insert found no partition for a row: ours were dropped elsewhere. */
  forget(): void {
    this.known.clear();
  }

  /** Drops every partition whose hours all end at or before `day`'s start; returns their count. */
  async dropBefore(day: number): Promise<number> {
    const partitions = await this.dataSource.query<{ name: string; bound: string }[]>(
      `SELECT c.relname AS name, pg_get_expr(c.relpartbound, c.oid) AS bound
       FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
       WHERE i.inhparent = 'stored_items'::regclass`,
    );
    let dropped = 0;
    for (const { name, bound } of partitions) {
      // FOR VALUES FROM (480000) TO (480024): the upper bound is exclusive.
      const upper = /TO \((-?\d+)\)/.exec(bound)?.[1];
      if (upper === undefined || Number(upper) > day * HOURS_PER_DAY) continue;
      await this.withLockTimeout(`DROP TABLE IF EXISTS "${name.replaceAll('"', '""')}"`);
      this.known.delete(dayOfBucket(Number(upper) - 1));
      dropped++;
    }
    return dropped;
  }

  private withLockTimeout(statement: string): Promise<void> {
    return this.dataSource.transaction(async (manager) => {
      await manager.query(`SET LOCAL lock_timeout = '${PARTITION_LOCK_TIMEOUT}'`);
      await manager.query(statement);
    });
  }
}

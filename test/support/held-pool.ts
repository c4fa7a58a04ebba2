import { Client } from 'pg';
import { DataSource } from 'typeorm';
import type { TestApp } from './test-app';
import { until } from './until';

/** An advisory lock id of these tests' own. */
const HELD_POOL_LOCK = 0x4845_4c44;

/**
 * Runs `check` while every connection of the app's pool waits on a lock the test holds, for as
 * long as the checks take (a fixed pg_sleep had to outlast them, which a stalled machine could
 * overrun), once the 1 s check cache has let go of what it read before.
 */
export async function whileThePoolIsHeld(app: TestApp, check: () => Promise<void>): Promise<void> {
  const database = app.app.get(DataSource);
  const holder = new Client({ connectionString: app.config.databaseUrl });
  await holder.connect();
  let held: Promise<unknown>[] = [];
  try {
    await holder.query('SELECT pg_advisory_lock($1)', [HELD_POOL_LOCK]);
    held = Array.from({ length: app.config.database.poolSize }, () =>
      database.query('SELECT pg_advisory_xact_lock_shared($1)', [HELD_POOL_LOCK]),
    );
    await until(async () => {
      const { rows } = await holder.query<{ waiting: number }>(
        `SELECT count(*)::int AS waiting FROM pg_stat_activity
         WHERE datname = current_database() AND wait_event_type = 'Lock'`,
      );
      return rows[0].waiting === app.config.database.poolSize || undefined;
    }, 10_000);
    await new Promise((resolve) => setTimeout(resolve, 1100)); // past the 1 s check cache
    await check();
  } finally {
    await holder.end();
    await Promise.all(held);
  }
}

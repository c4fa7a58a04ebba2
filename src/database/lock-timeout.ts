import { EntityManager } from 'typeorm';

/**
 * `SET LOCAL lock_timeout` for the transaction `manager` runs: past it a statement waiting for a
 * lock fails with SQLSTATE 55P03 (isLockTimeout), nothing done. set_config(…, true) is SET
 * LOCAL with the value a parameter, not text in the statement.
 */
export async function setLockTimeout(manager: EntityManager, lockTimeoutMs: number): Promise<void> {
  await manager.query("SELECT set_config('lock_timeout', $1, true)", [
    `${Math.max(1, Math.round(lockTimeoutMs))}ms`,
  ]);
}

/** Postgres' lock_not_available: a statement gave up waiting for a lock (lock_timeout). */
export function isLockTimeout(error: unknown): boolean {
  const { code, driverError } = (error ?? {}) as {
    code?: unknown;
    driverError?: { code?: unknown };
  };
  return code === '55P03' || driverError?.code === '55P03';
}

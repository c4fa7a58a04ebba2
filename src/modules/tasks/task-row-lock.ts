import { DataSource, EntityManager } from 'typeorm';
import { setLockTimeout } from '../../database/lock-timeout';
import { TaskState } from './task.types';

/** A task's row locked for one transaction (lockTaskRow). */
export interface TaskLock {
  /** The task's state as the lock found it, the latest committed; null: no such task. */
  readonly state: TaskState | null;
  /**
   * The SHA-256 of the JSON lines file the task records, as the lock found it: a Parquet file
   * made from another (an erasure rewrote the dataset meanwhile) is not renamed into place.
   */
  readonly datasetSha256: string | null;
  /** The transaction holding the lock: markCompleted, given the lock, records in it. */
  readonly manager: EntityManager;
}

/**
 * Runs `work` in a transaction that holds task `taskId`'s row lock (SELECT … FOR UPDATE) from its
 * start, and commits. With `lockTimeoutMs`, waits for the lock that long at most (`SET LOCAL
 * lock_timeout`: past it the query fails with SQLSTATE 55P03, nothing done); without, as long as
 * it takes. The repositories' `lockTask`s, the compile's and the erasure's, are this one lock.
 */
export function lockTaskRow<T>(
  dataSource: DataSource,
  taskId: string,
  work: (lock: TaskLock) => Promise<T>,
  lockTimeoutMs?: number,
): Promise<T> {
  return dataSource.transaction(async (manager) => {
    if (lockTimeoutMs !== undefined) await setLockTimeout(manager, lockTimeoutMs);
    const [row] = await manager.query<{ state: TaskState; dataset_sha256: string | null }[]>(
      'SELECT state, dataset_sha256 FROM scraping_tasks WHERE id = $1 FOR UPDATE',
      [taskId],
    );
    return work({ state: row?.state ?? null, datasetSha256: row?.dataset_sha256 ?? null, manager });
  });
}

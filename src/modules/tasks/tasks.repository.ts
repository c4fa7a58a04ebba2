import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { Source } from '../../common/source';
import { returningRows } from '../../database/returning-rows';
import { TaskJob, TaskListFilter, TaskRow, TaskState } from './task.types';

/** Arbitrary constant: the advisory lock that serializes task registrations. */
const REGISTRATION_LOCK_ID = 7_013_000_003;

/**
 * The task list's WHERE clause and its parameters ($1, $2, … in order), only the conditions the
 * filter sets: written `($1 IS NULL OR state = $1)`, a generic plan (plan_cache_mode, a driver's
 * named statements) cannot use the state's index for it, and read a rare state's tasks out of
 * every task's.
 */
function listCondition(filter: TaskListFilter): { where: string; parameters: string[] } {
  const conditions: string[] = [];
  const parameters: string[] = [];
  if (filter.state !== undefined) {
    parameters.push(filter.state);
    conditions.push(`state = $${parameters.length}`);
  }
  if (filter.completedAfter !== undefined) {
    parameters.push(filter.completedAfter.toISOString());
    // IS NOT NULL matches the partial index's predicate (migration TaskCompletedAtIndex).
    conditions.push(`completed_at IS NOT NULL AND completed_at > $${parameters.length}`);
  }
  return {
    where: conditions.length === 0 ? '' : `WHERE ${conditions.join(' AND ')}`,
    parameters,
  };
}

/**
 * Tasks as registered and read: registration (its lock and checks), the lists and lookups
 * clients make, weights and the network's record, the counts metrics report, and an admin's
 * recompile of a failed task. Collections and compiles are TaskLifecycleRepository's.
 */
@Injectable()
export class TasksRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /**
   * Serializes registrations (every replica, every hotkey) until the transaction ends: a
   * registration reads which ids exist, then inserts and stores the vote, and two of them
   * interleaving could each register the same new id with different params.
   */
  async lockRegistrations(manager: EntityManager): Promise<void> {
    await manager.query('SELECT pg_advisory_xact_lock($1)', [REGISTRATION_LOCK_ID]);
  }

  /** Tasks registered by `hotkey` that are active now. */
  async countActiveBy(hotkey: string, now: Date, manager: EntityManager): Promise<number> {
    const [row] = await manager.query<{ count: number }[]>(
      `SELECT count(*)::int AS count FROM scraping_tasks
       WHERE registered_by = $1 AND state = 'active' AND expires_at > $2`,
      [hotkey, now.toISOString()],
    );
    return row.count;
  }

  findByIds(
    ids: readonly string[],
    manager: EntityManager = this.dataSource.manager,
  ): Promise<TaskRow[]> {
    return manager.query('SELECT * FROM scraping_tasks WHERE id = ANY($1::varchar[])', [ids]);
  }

  /**
   * Tasks of these labels with no keyword and no post window (a partial index serves it), locked
   * FOR SHARE: the compiler's claim of one of them waits for the caller's transaction.
   */
  findLabelTasks(
    labels: readonly { platform: Source; label: string }[],
    manager: EntityManager,
  ): Promise<TaskRow[]> {
    if (labels.length === 0) return Promise.resolve([]);
    return manager.query(
      `SELECT * FROM scraping_tasks
       WHERE (platform, label) IN (SELECT * FROM unnest($1::varchar[], $2::varchar[]))
         AND keyword IS NULL AND post_start IS NULL AND post_end IS NULL
       FOR SHARE`,
      [labels.map((entry) => entry.platform), labels.map((entry) => entry.label)],
    );
  }

  findById(id: string): Promise<TaskRow | undefined> {
    return this.dataSource
      .query<TaskRow[]>('SELECT * FROM scraping_tasks WHERE id = $1', [id])
      .then((rows) => rows[0]);
  }

  /**
   * Sends a failed task back to `compiling`, its attempts and backoff reset, so the lifecycle
   * pass's next claim (TaskLifecycleRepository.claimExpired) compiles it at once; its
   * `failure_reason` stays until a compile succeeds (markCompleted clears it). Undefined when no
   * task has this id or it is not `failed`: one conditional UPDATE, so of two calls racing (on
   * any replicas) the second waits for the first's row lock, finds the task `compiling` and
   * changes nothing.
   */
  async recompileFailed(id: string): Promise<TaskRow | undefined> {
    const result: unknown = await this.dataSource.query(
      `UPDATE scraping_tasks SET state = 'compiling', compile_attempts = 0, compile_failed_at = NULL
       WHERE id = $1 AND state = 'failed'
       RETURNING *`,
      [id],
    );
    return returningRows<TaskRow>(result)[0];
  }

  /**
   * One page of the tasks the filter selects (newest registration first, or, with
   * `completedAfter`, in the order they completed: a task completing later joins the end) and
   * how many it selects in all, from one snapshot (REPEATABLE READ): read apart, a task
   * registered or completed between the two made the total disagree with the pages.
   */
  list(filter: TaskListFilter, limit: number, offset: number): Promise<[TaskRow[], number]> {
    // Each order has its indexes (migrations TaskListOrderIndexes, TaskCompletedAtIndex).
    const order = filter.completedAfter ? 'completed_at, id' : 'registered_at DESC, id';
    const { where, parameters } = listCondition(filter);
    const limitAt = parameters.length + 1;
    return this.dataSource.transaction('REPEATABLE READ', async (manager) => {
      const rows = await manager.query<TaskRow[]>(
        `SELECT * FROM scraping_tasks ${where} ORDER BY ${order} LIMIT $${limitAt} OFFSET $${limitAt + 1}`,
        [...parameters, limit, offset],
      );
      const [{ count }] = await manager.query<{ count: number }[]>(
        `SELECT count(*)::int AS count FROM scraping_tasks ${where}`,
        parameters,
      );
      return [rows, count];
    });
  }

  /** How many tasks are in each state (states without tasks are absent). */
  async countByState(): Promise<Map<TaskState, number>> {
    const rows = await this.dataSource.query<{ state: TaskState; count: number }[]>(
      'SELECT state, count(*)::int AS count FROM scraping_tasks GROUP BY state',
    );
    return new Map(rows.map((row) => [row.state, row.count]));
  }

  /** Registers new tasks; ids already present are left untouched (first registration wins). */
  async insertNew(
    jobs: readonly TaskJob[],
    hotkey: string,
    now: Date,
    expiresAt: Date,
    manager: EntityManager,
  ): Promise<string[]> {
    if (jobs.length === 0) return [];
    const rows = await manager.query<{ id: string }[]>(
      `INSERT INTO scraping_tasks (id, platform, label, keyword, post_start, post_end, registered_by, registered_at, expires_at)
       SELECT j.id, j.platform, j.label, j.keyword, j.post_start, j.post_end, $7, $8, $9
       FROM unnest($1::varchar[], $2::varchar[], $3::varchar[], $4::varchar[], $5::timestamptz[], $6::timestamptz[])
         AS j(id, platform, label, keyword, post_start, post_end)
       ON CONFLICT (id) DO NOTHING
       RETURNING id`,
      [
        jobs.map((job) => job.id),
        jobs.map((job) => job.platform),
        jobs.map((job) => job.label),
        jobs.map((job) => job.keyword),
        jobs.map((job) => job.postStart?.toISOString() ?? null),
        jobs.map((job) => job.postEnd?.toISOString() ?? null),
        hotkey,
        now.toISOString(),
        expiresAt.toISOString(),
      ],
    );
    return rows.map((row) => row.id);
  }

  activeIds(now: Date): Promise<{ id: string }[]> {
    return this.dataSource.query(
      `SELECT id FROM scraping_tasks WHERE state = 'active' AND expires_at > $1`,
      [now.toISOString()],
    );
  }

  /**
   * Which of these tasks have ended at `now` (no longer active, or expired and not yet claimed).
   */
  async endedAmong(
    ids: readonly string[],
    now: Date,
    manager: EntityManager = this.dataSource.manager,
  ): Promise<string[]> {
    const rows = await manager.query<{ id: string }[]>(
      `SELECT id FROM scraping_tasks
       WHERE id = ANY($1::varchar[]) AND NOT (state = 'active' AND expires_at > $2)`,
      [ids, now.toISOString()],
    );
    return rows.map((row) => row.id);
  }

  /**
   * Sets these tasks' weights (TasksService.setWeights), active tasks only: an ended task is
   * collected no more, and its row is the compiler's. A weight already right is not written.
   */
  async setWeights(
    weights: readonly { id: string; weight: number }[],
    manager: EntityManager,
  ): Promise<void> {
    if (weights.length === 0) return;
    await manager.query(
      `UPDATE scraping_tasks t SET weight = j.weight
       FROM unnest($1::varchar[], $2::float8[]) AS j(id, weight)
       WHERE t.id = j.id AND t.state = 'active' AND t.weight <> j.weight`,
      [weights.map((job) => job.id), weights.map((job) => job.weight)],
    );
  }

  /**
   * The tasks of a vote that was just committed on chain: registered on the network in that
   * block, unless an earlier commitment registered them already (the first one counts).
   */
  async recordNetworkRegistration(
    ids: readonly string[],
    registration: { block: number; at: Date; commitSha: string },
    manager: EntityManager,
  ): Promise<void> {
    await manager.query(
      `UPDATE scraping_tasks
       SET network_block = $2, network_registered_at = $3, network_commit_sha = $4
       WHERE id = ANY($1::varchar[]) AND network_block IS NULL`,
      [ids, registration.block, registration.at.toISOString(), registration.commitSha],
    );
  }

  /**
   * The tasks registered on the network by the commitment of `commitSha`, which the Gravity
   * repository no longer has: registered no longer, until the vote is committed again.
   */
  async forgetNetworkRegistration(commitSha: string): Promise<void> {
    await this.dataSource.query(
      `UPDATE scraping_tasks
       SET network_block = NULL, network_registered_at = NULL, network_commit_sha = NULL
       WHERE network_commit_sha = $1`,
      [commitSha],
    );
  }

  /**
   * Active tasks not collected within `lateAfterMs` (and registered, and their post window begun,
   * longer ago than that).
   */
  async countBehind(now: Date, lateAfterMs: number): Promise<number> {
    const [row] = await this.dataSource.query<{ count: number }[]>(
      `SELECT count(*)::int AS count FROM scraping_tasks
       WHERE state = 'active' AND expires_at > $1
         AND coalesce(last_collected_at, greatest(registered_at, post_start)) < $1::timestamptz - make_interval(secs => $2 / 1000.0)`,
      [now.toISOString(), lateAfterMs],
    );
    return row.count;
  }

  transaction<T>(work: (manager: EntityManager) => Promise<T>): Promise<T> {
    return this.dataSource.transaction(work);
  }
}

import { Source } from '../../common/source';

/**
 * States of a scraping task; see docs/decisions.md ("Scraping task lifecycle") for the transitions.
 */
export const TASK_STATES = ['active', 'compiling', 'completed', 'failed'] as const;
export type TaskState = (typeof TASK_STATES)[number];

/** Which tasks the task list shows: all of them, or those in a state, or completed after a time. */
export interface TaskListFilter {
  state?: TaskState;
  completedAfter?: Date;
}

/** The formats a completed task's dataset downloads as (`format` query parameter). */
export const DATASET_FORMATS = ['jsonl', 'parquet'] as const;
export type DatasetFormat = (typeof DATASET_FORMATS)[number];

/** How long a registered task stays active (collecting) before it is compiled. */
export const TASK_LIFETIME_MS = 7 * 24 * 3600 * 1000;

/** A job of a validator's vote, normalized: what a task is registered from. */
export interface TaskJob {
  id: string;
  platform: Source;
  /** Normalized: lower case; `#tag` for X, `r/name` for Reddit. */
  label: string | null;
  keyword: string | null;
  postStart: Date | null;
  postEnd: Date | null;
}

export interface TaskRow {
  id: string;
  platform: Source;
  label: string | null;
  keyword: string | null;
  post_start: Date | null;
  post_end: Date | null;
  state: TaskState;
  registered_by: string;
  registered_at: Date;
  expires_at: Date;
  items_collected: number;
  collections: number;
  last_collected_at: Date | null;
  /** Collection progress: see collection-paging.ts. */
  collect_head: Date | null;
  collect_cursor: Date | null;
  collect_floor: Date | null;
  collect_back_next: boolean;
  /** Failed collections in a row (reset by one that succeeds), and when the last one failed. */
  collect_failures: number;
  collect_failed_at: Date | null;
  /** Failed compiles, and when the last one failed (the next waits a backoff). */
  compile_attempts: number;
  compile_failed_at: Date | null;
  completed_at: Date | null;
  failure_reason: string | null;
  dataset_file: string | null;
  dataset_rows: number | null;
  dataset_bytes: string | null;
  dataset_sha256: string | null;
  /**
   * When the recorded JSON lines file was written (its `Last-Modified`): at the compile, the
   * completion; moved by an author's erasure that wrote it again. Null when a release before
   * migration 1765010000000 recorded it: then `completed_at`.
   */
  dataset_written_at: Date | null;
  data_start: Date | null;
  data_end: Date | null;
  /** The same rows as Parquet; null until written (see DatasetParquetService). */
  parquet_file: string | null;
  parquet_bytes: string | null;
  parquet_sha256: string | null;
  /** The writer that made it (PARQUET_VERSION); null for one made before versions were recorded. */
  parquet_version: number | null;
  /**
   * When the recorded Parquet file was written (its `Last-Modified`); null when a release before
   * migration 1764930000000 recorded it: then `completed_at`.
   */
  parquet_written_at: Date | null;
  /** Set when a vote naming the task was first committed on chain (vote publication). */
  network_block: string | null;
  network_registered_at: Date | null;
  network_commit_sha: string | null;
}

/** A completed task: its JSON lines dataset is written. */
export type CompletedTask = TaskRow & { dataset_file: string; dataset_sha256: string };

export function isCompleted(task: TaskRow): task is CompletedTask {
  return task.state === 'completed' && task.dataset_file !== null && task.dataset_sha256 !== null;
}

/** A job that cannot be registered, by its position in the submission. */
export interface RegistrationConflict {
  /** The job in conflict, or null when the submission as a whole is (too many active tasks). */
  index: number | null;
  message: string;
}

/** Whether a task is still collecting: active, and within its seven days. */
export function isRunning(task: Pick<TaskRow, 'state' | 'expires_at'>, now: Date): boolean {
  return task.state === 'active' && task.expires_at > now;
}

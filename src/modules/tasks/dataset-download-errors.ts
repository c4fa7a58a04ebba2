import { RetryLaterException } from '../../common/errors/retry-later';
import { quotedId } from './quoted-id';

// The texts of a download's refusals, shared by the service that throws them and the controller
// that documents them, so the documented examples are what clients get.

/** The 503 of a Parquet file that could not be written (documented on the operation). */
export function parquetUnavailable(id: string): string {
  return (
    `The Parquet file of task ${quotedId(id)} could not be written on this server; it is tried again ` +
    'an hour after the failure. The JSON lines dataset (format=jsonl) holds the same rows'
  );
}

/** The 503 of a dataset file that is not on this server, or not as recorded (documented). */
export function fileMissing(id: string): string {
  return `The dataset file of task ${quotedId(id)} is missing on this server`;
}

/** Retry-After of parquetBusy: a few seconds per 20,000 rows per conversion ahead of it. */
export const PARQUET_BUSY_RETRY_AFTER_SECONDS = 10;

/** The 503 of a Parquet conversion refused, the process busy with others (documented). */
export function parquetBusy(id: string): string {
  return (
    `The Parquet file of task ${quotedId(id)} is not written yet and this server is busy writing others; ` +
    'try again after Retry-After seconds. The JSON lines dataset (format=jsonl) holds the same rows'
  );
}

/** A 503 that says when to come back: PARQUET_BUSY_RETRY_AFTER_SECONDS. */
export class ParquetBusyException extends RetryLaterException {
  constructor(id: string) {
    super(parquetBusy(id), PARQUET_BUSY_RETRY_AFTER_SECONDS);
  }
}

/** The 409 of a task that has not completed yet (documented). */
export function notCompleted(id: string, state: string): string {
  return `Task ${quotedId(id)} is ${state}; its dataset is available once the task has completed`;
}

/**
 * The 410 of a task whose dataset could not be compiled (TASK_MAX_COMPILE_ATTEMPTS times): final
 * unless an operator sends it back to compiling (recompile), which the detail says (an error
 * texts audit: a client read it as final, and a recompile then made the dataset).
 */
export function taskFailed(id: string, reason: string | null): string {
  return `Task ${quotedId(id)} failed and has no dataset: ${reason ?? 'its dataset could not be compiled'} (an operator may have it compiled again)`;
}

/** The 412 of an If-Match naming another file than the task's (documented). */
export function preconditionFailed(id: string): string {
  return (
    `The dataset file of task ${quotedId(id)} is not the one If-Match names; ` +
    'ETag names the current file'
  );
}

/** The 412 of an If-Unmodified-Since before the file's Last-Modified (documented). */
export function modifiedSince(id: string): string {
  return (
    `The dataset file of task ${quotedId(id)} was written after the If-Unmodified-Since date; ` +
    'Last-Modified says when, ETag names the current file'
  );
}

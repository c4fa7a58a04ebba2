import { QueryFailedError } from 'typeorm';
import { isDatabaseUnavailable } from '../../common/database-unavailable';
import { CompileFailureReason } from '../../common/metrics/metric-labels';

/**
 * A stored item the compile could not read into the current item shape (a row of an earlier
 * release's shape it does not know, a row broken by hand). Its message is the conversion's own,
 * so the task's `failure_reason` reads as before.
 */
export class ItemConversionError extends Error {
  constructor(cause: unknown) {
    super((cause as Error)?.message ?? String(cause), { cause });
  }
}

/** Node's codes for a disk, or a user's quota, that is full. */
const DISK_FULL = new Set(['ENOSPC', 'EDQUOT']);

/**
 * Why a compile failed, as gateway_task_compile_failures_total counts it (a few fixed reasons,
 * never the message): `conversion` (ItemConversionError), `database` (a query that failed, or
 * Postgres out of reach), `disk_full`, `io` (any other error of a system call: a file's
 * permission, a rename, a directory in a file's place), `other` (a bug, a zlib error).
 * Postgres first: a refused connection is a system call's error too (ECONNREFUSED).
 */
export function compileFailureReason(error: unknown): CompileFailureReason {
  if (error instanceof ItemConversionError) return 'conversion';
  if (error instanceof QueryFailedError || isDatabaseUnavailable(error)) return 'database';
  const { code, syscall } = (error ?? {}) as NodeJS.ErrnoException;
  if (typeof code === 'string' && DISK_FULL.has(code)) return 'disk_full';
  if (typeof syscall === 'string') return 'io';
  return 'other';
}

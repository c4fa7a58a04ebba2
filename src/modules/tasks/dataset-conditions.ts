import { namesTag } from '../../common/http/entity-tags';
import { parseHttpDate, toWholeSecond } from '../../common/http/http-date';

/*
 * A download's conditional requests (RFC 9110 §13): what the file's validators (its ETag and
 * Last-Modified) are, and what the request's If-Match, If-None-Match, If-Modified-Since and
 * If-Unmodified-Since make of them. Pure: DatasetDownloadService answers by them.
 */

/** A dataset file's entity tag: its SHA-256, which names its bytes (a strong validator). */
export function entityTag(sha256: string): string {
  return `"${sha256}"`;
}

/** The request's conditions on the file (RFC 9110 §13.1), as its headers give them. */
export interface DatasetConditions {
  ifMatch?: string;
  ifNoneMatch?: string;
  ifModifiedSince?: string;
  ifUnmodifiedSince?: string;
}

/** What the controller sends as the file's validators, whatever the answer. */
export interface DatasetValidators {
  sha256: string;
  /** When the file was written, to the second; null when the task does not say. */
  lastModified: Date | null;
}

/**
 * The file's `Last-Modified`: when it was written, to the second (an HTTP-date says no more),
 * and never after `now` (RFC 9110 §8.8.2.1: a time in the future by this server's clock, a
 * replica's clock behind the one that wrote it, is sent as now).
 */
export function lastModifiedOf(writtenAt: Date | null, now: Date): Date | null {
  if (writtenAt === null) return null;
  return toWholeSecond(writtenAt > now ? now : writtenAt);
}

/**
 * Which precondition refuses the request (a 412), if one does (RFC 9110 §13.2.2, steps 1 and
 * 2): If-Match when none of its tags names the file; without If-Match, If-Unmodified-Since when
 * the file was written after its date (a value that is no HTTP-date is ignored, §13.1.4).
 */
export function preconditionRefused(
  conditions: DatasetConditions,
  { sha256, lastModified }: DatasetValidators,
  now: Date,
): 'If-Match' | 'If-Unmodified-Since' | undefined {
  // A client resuming or revalidating by If-Match holds another file (a dataset recompiled, a
  // Parquet file written again): told so, not sent this one as if it were that.
  if (conditions.ifMatch !== undefined)
    return namesTag(conditions.ifMatch, entityTag(sha256), 'strong') ? undefined : 'If-Match';
  if (conditions.ifUnmodifiedSince === undefined || lastModified === null) return undefined;
  const since = parseHttpDate(conditions.ifUnmodifiedSince, now);
  return since !== null && lastModified > since ? 'If-Unmodified-Since' : undefined;
}

/**
 * Whether the client holds the file (a 304; RFC 9110 §13.2.2, steps 3 and 4): If-None-Match
 * when one of its tags names it; without If-None-Match, If-Modified-Since when the file was not
 * written after its date. A date that is no HTTP-date, or one after `now` (§13.1.3: it says
 * nothing of what the client holds), is ignored; so is any date while the file was written
 * after `now` by this replica's clock: its Last-Modified is then `now`, which a client may have
 * been sent for the file before it.
 */
export function notModified(
  conditions: DatasetConditions,
  { sha256, lastModified }: DatasetValidators,
  writtenAt: Date | null,
  now: Date,
): boolean {
  if (conditions.ifNoneMatch !== undefined)
    return namesTag(conditions.ifNoneMatch, entityTag(sha256), 'weak');
  if (conditions.ifModifiedSince === undefined || lastModified === null) return false;
  if (writtenAt !== null && writtenAt > now) return false;
  const since = parseHttpDate(conditions.ifModifiedSince, now);
  return since !== null && since <= now && lastModified <= since;
}

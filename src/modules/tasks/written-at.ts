/**
 * SQL: when a dataset file that replaces one of other bytes is recorded as written (its
 * `Last-Modified`): `now`, the writing replica's time, but at least the second after `previous`,
 * when the file it replaces was recorded as written. An HTTP-date says whole seconds, and the
 * replica (or command) writing it may have a clock behind the one that wrote the last: with
 * `now` alone, a client's If-Modified-Since of the last file's date could be answered 304 for
 * the new bytes. `now` names a parameter (`$6`), `previous` a timestamptz expression; a null
 * `previous` gives `now`. One rule for the Parquet file a download records
 * (TaskLifecycleRepository.recordParquet) and the JSON lines file an erasure rewrites
 * (DatasetRecordsRepository.recordRewritten).
 */
export function rewrittenAtSql(now: string, previous: string): string {
  return `GREATEST(${now}::timestamptz, date_trunc('second', ${previous}) + interval '1 second')`;
}

/**
 * The first retry of a background load that failed (the periodic jobs, the metagraph's read,
 * the repository names' ingest), doubled per failure by retryDelay; the Retry-After of a 503 for
 * what is not loaded yet is made of it (errors/retry-later.ts).
 */
export const FIRST_RETRY_MS = 5000;

/**
 * The wait after `attempts + 1` failures in a row: `first` after the first (`attempts` 0), doubled
 * per failure after it, at most `max`.
 */
export function retryDelay(attempts: number, first: number, max: number): number {
  return Math.min(max, first * 2 ** Math.min(attempts, 30));
}

/**
 * retryDelay in SQL, for a backoff kept on a row (a task's failed collections and compiles, so
 * replicas and restarts keep it): `retryDelaySql(a, f, m)` is `retryDelay(a, f, m)` for SQL
 * expressions `a`, `f`, `m` (milliseconds, double precision). A row counting its failures `n`
 * from 1 passes `n - 1`: the first failure waits `first`.
 */
export function retryDelaySql(attempts: string, first: string, max: string): string {
  return `least(${max}, ${first} * power(2, least(${attempts}, 30)))`;
}

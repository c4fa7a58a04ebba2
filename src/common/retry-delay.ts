/**
 * The first retry of a background load that failed (the periodic jobs, the metagraph's read,
 * the repository names' ingest), doubled per failure by retryDelay; the Retry-After of a 503 for
 * what is not loaded yet is made of it (errors/retry-later.ts).
 */
export const FIRST_RETRY_MS = 5000;

/** The wait before attempt `attempts + 1`: `first` doubled per failure, at most `max`. */
export function retryDelay(attempts: number, first: number, max: number): number {
  return Math.min(max, first * 2 ** Math.min(attempts, 30));
}

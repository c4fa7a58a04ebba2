import type { Response } from 'express';
import type { RateLimitRecord } from './rate-limit-storage';

/** The one budget every key has, named in the IETF fields (one policy: one budget per key). */
export const RATE_LIMIT_POLICY = 'default';

/** Every rate-limit response header, for CORS and the documentation. */
export const RATE_LIMIT_HEADER_NAMES = [
  'X-RateLimit-Limit',
  'X-RateLimit-Remaining',
  'X-RateLimit-Reset',
  'RateLimit-Policy',
  'RateLimit',
  'Retry-After',
] as const;

export interface RateLimitState {
  /** Requests the key may make per window. */
  limit: number;
  /** Requests left before the quota resets. */
  remaining: number;
  /** Seconds until the quota resets: the window's end, or the cool-down's end once over budget. */
  resetSeconds: number;
  windowSeconds: number;
}

/** The budget after a counted hit: over it, nothing remains until the cool-down ends. */
export function rateLimitState(
  limit: number,
  record: RateLimitRecord,
  windowSeconds: number,
): RateLimitState {
  return {
    limit,
    remaining: record.isBlocked ? 0 : limit - record.totalHits,
    resetSeconds: record.isBlocked ? Math.max(1, record.timeToBlockExpire) : record.timeToExpire,
    windowSeconds,
  };
}

/**
 * Writes the budget in both forms: the `X-RateLimit-*` headers clients already read, and the
 * IETF fields of draft-ietf-httpapi-ratelimit-headers (structured-field lists): `RateLimit-Policy`
 * (the quota `q` per window `w`, in seconds) and `RateLimit` (what remains, `r`, and the seconds
 * until it resets, `t`). Both forms carry the same numbers.
 */
export function setRateLimitHeaders(response: Response, state: RateLimitState): void {
  const remaining = Math.max(0, state.remaining);
  const reset = Math.max(0, state.resetSeconds);
  response.setHeader('X-RateLimit-Limit', state.limit);
  response.setHeader('X-RateLimit-Remaining', remaining);
  response.setHeader('X-RateLimit-Reset', reset);
  response.setHeader(
    'RateLimit-Policy',
    `"${RATE_LIMIT_POLICY}";q=${state.limit};w=${state.windowSeconds}`,
  );
  response.setHeader('RateLimit', `"${RATE_LIMIT_POLICY}";r=${remaining};t=${reset}`);
}

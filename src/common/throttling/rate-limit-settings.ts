/** Every key's budget of requests per window, by class; provided by ConfigModule (RATE_LIMIT_*). */
export interface RateLimitSettings {
  regularPerWindow: number;
  validatorPerWindow: number;
  windowSeconds: number;
}
export const RATE_LIMIT_SETTINGS = Symbol('RATE_LIMIT_SETTINGS');

/**
 * Bounds of a budget of requests per window: a key's own `rate_limit` (also a CHECK in the
 * database) and a class's (RATE_LIMIT_REGULAR, RATE_LIMIT_VALIDATOR) alike.
 */
export const RATE_LIMIT_MIN = 1;
export const RATE_LIMIT_MAX = 1_000_000;

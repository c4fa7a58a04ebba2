/** Every key's budget of requests per window, by class; provided by ConfigModule (RATE_LIMIT_*). */
export interface RateLimitSettings {
  regularPerWindow: number;
  validatorPerWindow: number;
  windowSeconds: number;
}
export const RATE_LIMIT_SETTINGS = Symbol('RATE_LIMIT_SETTINGS');

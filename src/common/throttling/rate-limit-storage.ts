import { Inject, SetMetadata } from '@nestjs/common';

/** What counting one hit answers. Times are whole seconds, rounded up. */
export interface RateLimitRecord {
  /** Hits counted in the current window, this one included. */
  totalHits: number;
  timeToExpire: number;
  /** True while the key is in its cool-down: the hit is refused. */
  isBlocked: boolean;
  timeToBlockExpire: number;
}

/**
 * Counts hits per key: a fixed window of `ttl` ms started by its first hit, and a block of
 * `blockDuration` ms once the count passes `limit`. `scope` names the budget (`default` for
 * the keys' budgets, `auth-failures` for failed authentications); it is part of the stored key.
 */
export interface RateLimitStorage {
  increment(
    key: string,
    ttl: number,
    limit: number,
    blockDuration: number,
    scope: string,
  ): Promise<RateLimitRecord>;
}

/** The process' one storage (ThrottlingModule): Redis with a fallback, or memory. */
export const RATE_LIMIT_STORAGE = Symbol('RATE_LIMIT_STORAGE');
export const InjectRateLimitStorage = () => Inject(RATE_LIMIT_STORAGE);

/** Marks a route whose requests are not charged to the key's budget (RateLimitGuard). */
export const SKIP_RATE_LIMIT = 'rate-limit:skip';
export const SkipRateLimit = () => SetMetadata(SKIP_RATE_LIMIT, true);

import { Inject, SetMetadata } from '@nestjs/common';

/** What counting one hit answers. Times are whole seconds, rounded up. */
export interface RateLimitRecord {
  /** Hits admitted in the current window, this one if admitted; refused hits are not counted. */
  totalHits: number;
  timeToExpire: number;
  /** True while the key is in its cool-down: the hit is refused. */
  isBlocked: boolean;
  timeToBlockExpire: number;
}

/** One hit to count. */
export interface RateLimitHit {
  key: string;
  /**
   * `default` for the keys' budgets, `auth-failures` for failed authentications; part of the stored
   * key.
   */
  scope: string;
  /** The window, in ms, started by its first hit. */
  ttl: number;
  limit: number;
  /** The block, in ms, started by the hit past the limit; the window ends no earlier. */
  blockDuration: number;
}

/**
 * Counts hits per key and scope: a fixed window, and a block started by the hit past the limit,
 * after which a new window starts (RedisThrottlerStorage's script has the rules).
 */
export interface RateLimitStorage {
  increment(hit: RateLimitHit): Promise<RateLimitRecord>;
  /**
   * The count and cool-down of a key and scope as they stand, without counting a hit: what
   * another replica has counted is read before something is let in (the master key, past an
   * address's failures elsewhere).
   */
  peek(key: string, scope: string): Promise<RateLimitCount>;
}

/** A key's count as it stands. */
export interface RateLimitCount {
  /** Hits admitted in the current window; 0 once it has ended. */
  hits: number;
  /** Seconds to the window's end, rounded up; 0 once it has ended. */
  windowEndsInSeconds: number;
  /** Seconds to the cool-down's end, rounded up; 0 while there is none. */
  blockedForSeconds: number;
}

/** The process' one storage (ThrottlingModule): Redis with a fallback, or memory. */
export const RATE_LIMIT_STORAGE = Symbol('RATE_LIMIT_STORAGE');
export const InjectRateLimitStorage = () => Inject(RATE_LIMIT_STORAGE);

/** Marks a route whose requests are not charged to the key's budget (RateLimitGuard). */
export const SKIP_RATE_LIMIT = 'rate-limit:skip';
export const SkipRateLimit = () => SetMetadata(SKIP_RATE_LIMIT, true);

import { Logger, OnApplicationShutdown } from '@nestjs/common';
import { RedisConnection } from '../redis/redis-connection';
import { MemoryThrottlerStorage } from './memory-throttler-storage';
import {
  RateLimitCount,
  RateLimitHit,
  RateLimitRecord,
  RateLimitStorage,
} from './rate-limit-storage';

/**
 * Rate-limit counts in Redis (shared by every replica), and in this process' memory while
 * Redis is unreachable or resting after a failed command (RedisConnection.ready), so that a
 * Redis outage costs exactness, not availability: during the outage each replica admits up to
 * the full budget of a key on its own (at most N × budget across N replicas). Once Redis
 * answers again, the Redis counts (whatever of the window is left) are used again, and the counts
 * made in memory are dropped: each outage counts from zero.
 */
export class FallbackThrottlerStorage implements RateLimitStorage, OnApplicationShutdown {
  private readonly logger = new Logger('RateLimitStorage');
  private readonly local = new MemoryThrottlerStorage();
  private usingLocal = false;

  constructor(
    private readonly redis: RedisConnection,
    private readonly shared: RateLimitStorage,
  ) {}

  increment(hit: RateLimitHit): Promise<RateLimitRecord> {
    const local = () => this.local.increment(hit);
    if (!this.redis.ready()) {
      this.switchTo(true, 'not connected, or resting after a failure');
      return local();
    }
    // Chained, not awaited: this runs on every request, and each await is one more promise.
    return this.shared.increment(hit).then(
      (record) => {
        this.switchTo(false);
        return record;
      },
      (error: Error) => {
        this.redis.failed(error.message);
        this.switchTo(true, error.message);
        return local();
      },
    );
  }

  /** From Redis while it answers, else from this process' counts, as `increment` counts. */
  peek(key: string, scope: string): Promise<RateLimitCount> {
    const local = () => this.local.peek(key, scope);
    if (!this.redis.ready()) return local();
    return this.shared.peek(key, scope).catch((error: Error) => {
      this.redis.failed(error.message);
      this.switchTo(true, error.message);
      return local();
    });
  }

  onApplicationShutdown(): void {
    this.local.onApplicationShutdown();
  }

  private switchTo(local: boolean, reason?: string): void {
    if (local === this.usingLocal) return;
    this.usingLocal = local;
    // An earlier outage's counts would come back at the next blip, a cool-down Redis no longer
    // holds with them (an audit's finding). Cleared at each change, and only then: a Redis that
    // keeps failing without answering in between is one outage, counted on.
    this.local.clear();
    if (local)
      this.logger.warn(`Redis unavailable (${reason}): rate limits counted in this process`);
    else this.logger.log('Redis is back: rate limits shared again');
  }
}

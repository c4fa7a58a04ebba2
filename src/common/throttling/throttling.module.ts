import { Module } from '@nestjs/common';
import { RedisConnection } from '../redis/redis-connection';
import { FallbackThrottlerStorage } from './fallback-throttler-storage';
import { MemoryThrottlerStorage } from './memory-throttler-storage';
import { RATE_LIMIT_STORAGE, RateLimitStorage } from './rate-limit-storage';
import { RedisThrottlerStorage } from './redis-throttler-storage';

/**
 * The rate-limit storage of the process (RateLimitGuard's budgets per key, AuthFailureLimiter's
 * failures per address). Counts live in memory (MemoryThrottlerStorage), or in Redis when
 * REDIS_URL is set so that every replica draws from the same budget (RedisThrottlerStorage
 * updates the count and the block in one Lua script, so admission is exact). While Redis is
 * unreachable, counts fall back to this process' memory (FallbackThrottlerStorage).
 */
@Module({
  providers: [
    {
      provide: RATE_LIMIT_STORAGE,
      inject: [RedisConnection],
      useFactory: (redis: RedisConnection): RateLimitStorage =>
        redis.client
          ? new FallbackThrottlerStorage(redis, new RedisThrottlerStorage(redis.client))
          : new MemoryThrottlerStorage(),
    },
  ],
  exports: [RATE_LIMIT_STORAGE],
})
export class ThrottlingModule {}

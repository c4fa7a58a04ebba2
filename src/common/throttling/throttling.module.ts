import { ExecutionContext, Module } from '@nestjs/common';
import { ThrottlerModule, ThrottlerModuleOptions } from '@nestjs/throttler';
import { AppConfig } from '../../config/app-config';
import { APP_CONFIG } from '../../config/config.module';
import { AuthenticatedRequest } from '../auth/api-key-principal';
import { RedisConnection } from '../redis/redis-connection';
import { FallbackThrottlerStorage } from './fallback-throttler-storage';
import { MemoryThrottlerStorage } from './memory-throttler-storage';
import { RedisThrottlerStorage } from './redis-throttler-storage';

/**
 * One hourly budget per key (not per route), sized by the key's own limit, else by its class.
 * Counts live in memory (MemoryThrottlerStorage), or in Redis when REDIS_URL is set so that every replica draws from the
 * same budget, whatever the limit of each key (RedisThrottlerStorage updates the count and the
 * block in one Lua script, so admission is exact).
 * While Redis is unreachable, counts fall back to this process' memory (FallbackThrottlerStorage).
 */
@Module({
  imports: [
    ThrottlerModule.forRootAsync({
      inject: [APP_CONFIG, RedisConnection],
      useFactory: (config: AppConfig, redis: RedisConnection): ThrottlerModuleOptions => {
        const { regularPerWindow, validatorPerWindow, windowSeconds } = config.rateLimits;
        return {
          throttlers: [
            {
              name: 'default',
              ttl: windowSeconds * 1000,
              // Going over the budget starts a cool-down of one window (Retry-After says how long).
              blockDuration: windowSeconds * 1000,
              limit: (context: ExecutionContext) => {
                const key = context.switchToHttp().getRequest<AuthenticatedRequest>().apiKey;
                // A key's own limit (set by the master key) overrides its class's budget.
                const classBudget =
                  key?.tier === 'validator' ? validatorPerWindow : regularPerWindow;
                return key?.rateLimit ?? classBudget;
              },
            },
          ],
          getTracker: (request: Record<string, unknown>) =>
            (request as AuthenticatedRequest).apiKey?.id ?? 'anonymous',
          generateKey: (_context, tracker, throttlerName) =>
            `ratelimit:${throttlerName}:${tracker}`,
          storage: redis.client
            ? new FallbackThrottlerStorage(redis, new RedisThrottlerStorage(redis.client))
            : new MemoryThrottlerStorage(),
        };
      },
    }),
  ],
  exports: [ThrottlerModule],
})
export class ThrottlingModule {}

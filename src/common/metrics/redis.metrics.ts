import { Injectable, OnModuleInit } from '@nestjs/common';
import { RedisConnection } from '../redis/redis-connection';
import { MetricsService } from './metrics.service';

/**
 * Whether this instance uses Redis now (REDIS_URL set): while it does not, each replica counts
 * rate limits on its own (up to N × a key's budget across N replicas) and caches in process.
 */
@Injectable()
export class RedisMetrics implements OnModuleInit {
  constructor(
    private readonly metrics: MetricsService,
    private readonly redis: RedisConnection,
  ) {}

  onModuleInit(): void {
    if (!this.redis.client) return;
    this.metrics.gauge(
      'redis_connected',
      'Whether this instance uses Redis now (connected, and not resting after a failed command): 1 or 0; absent without REDIS_URL',
      [],
      async () => [{ labels: {}, value: (await this.redis.problem()) === undefined ? 1 : 0 }],
    );
  }
}

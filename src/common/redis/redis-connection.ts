import { Injectable, OnApplicationShutdown } from '@nestjs/common';
import Redis from 'ioredis';
import { AppConfig } from '../../config/app-config';
import { InjectConfig } from '../../config/config.module';

/** The shared Redis connection, or none when REDIS_URL is unset (single-replica mode). */
@Injectable()
export class RedisConnection implements OnApplicationShutdown {
  readonly client: Redis | null;

  constructor(@InjectConfig() config: AppConfig) {
    this.client = config.redisUrl
      ? new Redis(config.redisUrl, {
          // Fail commands quickly instead of queueing them while Redis is unreachable.
          maxRetriesPerRequest: 1,
          connectTimeout: 2000,
          commandTimeout: 2000,
          lazyConnect: false,
        })
      : null;
    // ioredis reconnects by itself; the error event only needs a listener so it is not fatal.
    this.client?.on('error', () => undefined);
  }

  async onApplicationShutdown(): Promise<void> {
    await this.client?.quit().catch(() => this.client?.disconnect());
  }
}

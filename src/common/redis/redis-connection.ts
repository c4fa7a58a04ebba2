import { Injectable, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import Redis from 'ioredis';
import { AppConfig } from '../../config/app-config';
import { InjectConfig } from '../../config/config.module';

/** Timeouts of every Redis call: users fall back (rate limits, cache) rather than wait longer. */
export const REDIS_CONNECT_TIMEOUT_MS = 2000;
export const REDIS_COMMAND_TIMEOUT_MS = 1000;

/** The shared Redis connection, or none when REDIS_URL is unset (single-replica mode). */
@Injectable()
export class RedisConnection implements OnModuleInit, OnApplicationShutdown {
  readonly client: Redis | null;

  constructor(@InjectConfig() config: AppConfig) {
    this.client = config.redisUrl
      ? new Redis(config.redisUrl, {
          // Fail commands quickly instead of queueing them while Redis is unreachable.
          maxRetriesPerRequest: 1,
          connectTimeout: REDIS_CONNECT_TIMEOUT_MS,
          commandTimeout: REDIS_COMMAND_TIMEOUT_MS,
          lazyConnect: false,
          // Commands issued in the same turn of the event loop go out in one write (and their
          // answers come back in one read): under load, one system call for many requests'
          // rate-limit hits instead of one each, which cost more than anything else a request did.
          enableAutoPipelining: true,
          // Applied by ioredis to every key, including the KEYS of the rate limiter's script.
          keyPrefix: config.redisKeyPrefix,
        })
      : null;
    // ioredis reconnects by itself (every 2 s at most); the error event only needs a listener
    // so that it is not fatal.
    this.client?.on('error', () => undefined);
  }

  /**
   * Start-up waits for the first connection (at most the connect timeout), so that the first
   * requests already share limits; a Redis that is down at start only delays the start.
   */
  async onModuleInit(): Promise<void> {
    const client = this.client;
    if (!client || client.status === 'ready') return;
    let timer: NodeJS.Timeout | undefined;
    let onReady: (() => void) | undefined;
    await new Promise<void>((resolve) => {
      onReady = resolve;
      client.once('ready', onReady);
      timer = setTimeout(resolve, REDIS_CONNECT_TIMEOUT_MS);
    });
    clearTimeout(timer);
    if (onReady) client.off('ready', onReady);
  }

  /**
   * The client when it is connected, else null: while Redis is down callers use their
   * in-process fallback at once instead of queueing a command that would only time out.
   */
  ready(): Redis | null {
    return this.client?.status === 'ready' ? this.client : null;
  }

  async onApplicationShutdown(): Promise<void> {
    await this.client?.quit().catch(() => this.client?.disconnect());
  }
}

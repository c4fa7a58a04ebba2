import { Injectable, Logger, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import type Redis from 'ioredis';
import { RedisConnection } from '../../common/redis/redis-connection';
import { redisFailureText } from '../../common/redis/redis-failure';
import { AppConfig } from '../../config/app-config';
import { InjectConfig } from '../../config/config.module';

/**
 * Tells every replica sharing Redis that a key changed (deactivated, or its name, expiry or rate
 * limit updated), by its id, not a secret, so that each drops it from its key cache at once
 * instead of trusting the old copy until the cache entry expires. Without Redis, or while it is
 * down, the cache's short lifetime (KEY_CACHE_TTL_MS) is the bound.
 */
@Injectable()
export class KeyChanges implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger(KeyChanges.name);
  private readonly channel: string;
  private readonly listeners: ((keyId: string) => void)[] = [];
  /** Pub/sub needs a connection of its own: a subscribed connection takes no other commands. */
  private subscriber: Redis | undefined;
  /** Once true, ioredis keeps the subscription across reconnections by itself. */
  private subscribed = false;

  constructor(
    private readonly redis: RedisConnection,
    @InjectConfig() config: AppConfig,
  ) {
    // Channels are not keys: the key prefix is added here, so deployments sharing Redis stay apart.
    this.channel = `${config.redisKeyPrefix}api-key-changed`;
  }

  onChanged(listener: (keyId: string) => void): void {
    this.listeners.push(listener);
  }

  async onModuleInit(): Promise<void> {
    const client = this.redis.client;
    if (!client) return;
    const subscriber = client.duplicate();
    this.subscriber = subscriber;
    subscriber.on('error', () => undefined);
    subscriber.on('message', (channel: string, keyId: string) => {
      if (channel === this.channel) this.listeners.forEach((listener) => listener(keyId));
    });
    // ioredis subscribes again by itself after a reconnection, but only to channels whose
    // subscription once succeeded: a subscription that failed (Redis down at start) is asked
    // again at each connection until one succeeds, or this replica would not hear of a change
    // until it restarted (found by an audit).
    subscriber.on('ready', () => void this.subscribe(subscriber));
    await this.subscribe(subscriber);
  }

  private async subscribe(subscriber: Redis): Promise<void> {
    if (this.subscribed) return;
    await subscriber.subscribe(this.channel).then(
      () => (this.subscribed = true),
      (error: Error) =>
        this.logger.warn(`not subscribed to key changes yet: ${redisFailureText(error)}`),
    );
  }

  /**
   * Best effort: a replica that misses it drops its copy within KEY_CACHE_TTL_MS. One that is not
   * sent (Redis down, or resting after a failed command) is logged by the key's id, never the key
   * or its hash, so that an operator knows which change the other replicas heard late.
   */
  async publish(keyId: string): Promise<void> {
    const client = this.redis.ready();
    if (!client) {
      // Without Redis there is no other replica to tell.
      if (this.redis.client) this.notPublished(keyId, 'Redis not used now');
      return;
    }
    await client.publish(this.channel, keyId).catch((error: Error) => {
      const reason = redisFailureText(error);
      this.redis.failed(reason);
      this.notPublished(keyId, reason);
    });
  }

  private notPublished(keyId: string, reason: string): void {
    this.logger.warn(
      `change of key ${keyId} not announced (${reason}): other replicas drop their copy of it ` +
        'when their cache entry expires',
    );
  }

  async onApplicationShutdown(): Promise<void> {
    await this.subscriber?.quit().catch(() => this.subscriber?.disconnect());
  }
}

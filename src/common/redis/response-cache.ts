import { Injectable, Logger } from '@nestjs/common';
import { LRUCache } from 'lru-cache';
import { RedisConnection } from './redis-connection';

/**
 * Short-lived cache of JSON responses: in Redis when REDIS_URL is set (shared by replicas),
 * else in process memory. While Redis is unreachable the process memory is used, so a Redis
 * outage costs sharing, not answers. A cache that fails is a miss, never an error.
 */
@Injectable()
export class ResponseCache {
  private readonly logger = new Logger(ResponseCache.name);
  private readonly local = new LRUCache<string, string>({ max: 2000, ttlAutopurge: false });

  constructor(private readonly redis: RedisConnection) {}

  async get<T>(key: string): Promise<T | undefined> {
    const client = this.redis.ready();
    let text: string | null | undefined;
    try {
      text = client ? await client.get(key) : this.local.get(key);
    } catch (error) {
      this.failed(client, 'read', error as Error);
      return undefined;
    }
    if (!text) return undefined;
    // A value that does not parse is a miss, not a Redis failure: Redis answered.
    try {
      return JSON.parse(text) as T;
    } catch {
      this.logger.warn('a cache entry is not JSON: read as a miss');
      return undefined;
    }
  }

  async set(key: string, value: unknown, ttlSeconds: number): Promise<void> {
    if (ttlSeconds <= 0) return;
    const text = JSON.stringify(value);
    const client = this.redis.ready();
    try {
      if (client) await client.set(key, text, 'EX', ttlSeconds);
      else this.local.set(key, text, { ttl: ttlSeconds * 1000 });
    } catch (error) {
      this.failed(client, 'write', error as Error);
    }
  }

  /** A failed Redis command rests Redis (RedisConnection.failed), so the next ones do not wait. */
  private failed(client: unknown, what: 'read' | 'write', error: Error): void {
    if (client) this.redis.failed(error.message);
    this.logger.warn(`cache ${what} failed: ${error.message}`);
  }
}

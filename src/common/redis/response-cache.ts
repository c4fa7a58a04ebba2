import { Injectable, Logger } from '@nestjs/common';
import { LRUCache } from 'lru-cache';
import { RedisConnection } from './redis-connection';
import { redisFailureText } from './redis-failure';
import { refusedForMemory } from './redis-refusals';

/**
 * The process-memory store is bounded by size, not only by count: an answer of 1,000 items is
 * about 1 MB of JSON and a miner's OnDemandRequest answer may be up to 16 MB, so 2,000 entries
 * held over 2 GB (an audit's finding). A stored text is counted at two bytes a character, the
 * most a V8 string takes; an answer over an eighth of the cap is not kept at all
 * (docs/decisions.md, "On-demand queries and the miner network").
 */
export const LOCAL_CACHE_MAX_BYTES = 64 * 1024 * 1024;
export const LOCAL_CACHE_MAX_ENTRY_BYTES = LOCAL_CACHE_MAX_BYTES / 8;

/**
 * Short-lived cache of JSON responses: in Redis when REDIS_URL is set (shared by replicas),
 * else in process memory. While Redis is unreachable the process memory is used, so a Redis
 * outage costs sharing, not answers. A cache that fails is a miss, never an error.
 */
@Injectable()
export class ResponseCache {
  private readonly logger = new Logger(ResponseCache.name);
  // ttlAutopurge: an expired entry is let go when its lifetime ends, not when it is next read or
  // evicted; without it the expired answers stayed in memory until 2,000 newer ones came.
  private readonly local = new LRUCache<string, string>({
    max: 2000,
    maxSize: LOCAL_CACHE_MAX_BYTES,
    maxEntrySize: LOCAL_CACHE_MAX_ENTRY_BYTES,
    sizeCalculation: (text) => text.length * 2,
    ttlAutopurge: true,
  });

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

  /**
   * A failed Redis command rests Redis (RedisConnection.failed), so the next ones do not wait.
   * Not a write refused for memory (OOM, under `maxmemory-policy noeviction`): Redis answered,
   * and resting it for a cache entry moved every replica's limits into its memory for 2 s at
   * each cached answer (a hosted-Redis audit).
   */
  private failed(client: unknown, what: 'read' | 'write', error: Error): void {
    const reason = redisFailureText(error);
    if (client && !refusedForMemory(error)) this.redis.failed(reason);
    this.logger.warn(`cache ${what} failed: ${reason}`);
  }
}

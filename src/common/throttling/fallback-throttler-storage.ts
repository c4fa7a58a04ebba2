import { Logger, OnApplicationShutdown } from '@nestjs/common';
import { storage } from 'nestjs-pino/storage';
import { lruCache } from '../lru-cache';
import { RedisConnection } from '../redis/redis-connection';
import { redisFailureText } from '../redis/redis-failure';
import { monotonicNow } from '../clock/monotonic';
import {
  countHit,
  MAX_COUNTERS,
  MemoryThrottlerStorage,
  RateLimitCounter,
} from './memory-throttler-storage';
import {
  RateLimitCount,
  RateLimitHit,
  RateLimitRecord,
  RateLimitStorage,
} from './rate-limit-storage';

/**
 * Rate-limit counts in Redis (shared by every replica), and in this process' memory while
 * Redis is unreachable or resting after a failed command (RedisConnection.ready), so that a
 * Redis outage costs exactness, not availability. The counts in memory start from what Redis
 * last answered this process for the key (`answers`): a key Redis had in its cool-down stays
 * there until its end, a key at 90 of 100 counts on from 90 in that window; so during the
 * outage each replica admits at most what was left of a key's budget when Redis last answered
 * it (a key Redis never answered here: the full budget). Once Redis answers again, the Redis
 * counts are used again, and the counts made in memory are dropped (docs/decisions.md,
 * "Outages").
 */
export class FallbackThrottlerStorage implements RateLimitStorage, OnApplicationShutdown {
  private readonly logger = new Logger('RateLimitStorage');
  /**
   * What Redis last answered this process, per `${key}:${scope}`, its ends on the counts'
   * monotonic clock (monotonicNow): where the counts in memory start. Bounded as those are; an
   * entry whose window ended seeds nothing.
   */
  private readonly answers = lruCache<string, RateLimitCounter>(MAX_COUNTERS);
  private readonly local = new MemoryThrottlerStorage(monotonicNow, MAX_COUNTERS, (id) =>
    this.answers.get(id),
  );
  private usingLocal = false;
  /**
   * Counted up at each switch to memory: an answer to a command sent before it (a flood's
   * replies, read after the first timeout) is Redis' count, but no sign that Redis is used again.
   */
  private fallbacks = 0;

  constructor(
    private readonly redis: RedisConnection,
    private readonly shared: RateLimitStorage,
  ) {}

  increment(hit: RateLimitHit): Promise<RateLimitRecord> {
    if (!this.redis.ready()) {
      this.switchTo(true, 'not connected, or resting after a failure');
      return this.local.increment(hit);
    }
    const fallbacks = this.fallbacks;
    // Chained, not awaited: this runs on every request, and each await is one more promise.
    return this.shared.increment(hit).then(
      (record) => {
        const { totalHits, timeToExpire, isBlocked, timeToBlockExpire } = record;
        const blockedFor = isBlocked ? timeToBlockExpire : 0;
        this.remember(`${hit.key}:${hit.scope}`, totalHits, timeToExpire, blockedFor, hit.limit);
        if (fallbacks === this.fallbacks) this.switchTo(false);
        return record;
      },
      (error: Error) => this.failed(hit, error),
    );
  }

  /** From Redis while it answers, else from this process' counts, as `increment` counts. */
  peek(key: string, scope: string): Promise<RateLimitCount> {
    const local = () => this.local.peek(key, scope);
    if (!this.redis.ready()) return local();
    return this.shared.peek(key, scope).then(
      (count) => {
        // A cool-down's limit is at most its count (it starts at the limit and counts no more),
        // so the count stands for it.
        const { hits, windowEndsInSeconds, blockedForSeconds } = count;
        this.remember(`${key}:${scope}`, hits, windowEndsInSeconds, blockedForSeconds, hits);
        return count;
      },
      (error: Error) => {
        const reason = redisFailureText(error);
        if (this.redis.failed(reason)) this.switchTo(true, reason);
        return local();
      },
    );
  }

  onApplicationShutdown(): void {
    this.local.onApplicationShutdown();
  }

  /**
   * Redis rested (down, hanging): counted in memory from here on. Else the timeout was this
   * process' own stall (RedisConnection.failed), Redis is still used, and only this hit, which
   * Redis has most likely counted too, is counted on its last answer, as Redis would have.
   */
  private failed(hit: RateLimitHit, error: Error): RateLimitRecord | Promise<RateLimitRecord> {
    const reason = redisFailureText(error);
    if (this.redis.failed(reason)) {
      this.switchTo(true, reason);
      return this.local.increment(hit);
    }
    const id = `${hit.key}:${hit.scope}`;
    const counter = this.answers.get(id) ?? { hits: 0, windowEnds: 0, blockEnds: 0, blockLimit: 0 };
    const record = countHit(counter, hit, monotonicNow());
    this.answers.set(id, counter);
    return record;
  }

  /**
   * Keeps Redis' answer, its times (whole seconds, rounded up) made ends: up to a second later
   * than Redis' own, and later still by the time its reply waited to be read, so a seed's
   * cool-down never ends before Redis' (as Retry-After says).
   */
  private remember(
    id: string,
    hits: number,
    windowEndsInSeconds: number,
    blockedForSeconds: number,
    blockLimit: number,
  ): void {
    const now = monotonicNow();
    this.answers.set(id, {
      hits,
      windowEnds: windowEndsInSeconds > 0 ? now + windowEndsInSeconds * 1000 : 0,
      blockEnds: blockedForSeconds > 0 ? now + blockedForSeconds * 1000 : 0,
      blockLimit,
    });
  }

  private switchTo(local: boolean, reason?: string): void {
    if (local === this.usingLocal) return;
    this.usingLocal = local;
    if (local) this.fallbacks += 1;
    // An earlier outage's counts would come back at the next blip, a cool-down Redis no longer
    // holds with them (an audit's finding). Cleared at each change, and only then: a Redis that
    // keeps failing without answering in between is one outage, counted on.
    this.local.clear();
    // The process's lines, not the request's that happened to meet Redis failing or again (an
    // on-call audit saw it under a user's request id, 46 s after the reconnect).
    if (local)
      storage.exit(() =>
        this.logger.warn(`Redis unavailable (${reason}): rate limits counted in this process`),
      );
    else storage.exit(() => this.logger.log('Redis is back: rate limits shared again'));
  }
}

import type { OnApplicationShutdown } from '@nestjs/common';
import type { RateLimitHit, RateLimitRecord, RateLimitStorage } from './rate-limit-storage';

interface Counter {
  hits: number;
  /** When the window (started by its first hit) ends, epoch ms. */
  windowEnds: number;
  /** When the block ends, epoch ms; 0 while not blocked. */
  blockEnds: number;
  /** The limit the block was started under. */
  blockLimit: number;
}

/** How often counters whose window and block have both ended are dropped. */
const PRUNE_INTERVAL_MS = 60_000;

/**
 * Rate-limit counts in this process: without Redis (one replica), and while Redis is down
 * (FallbackThrottlerStorage). The rules of RedisThrottlerStorage's script, step for step, so
 * that a key's budget means the same in both: a fixed window started by its first hit, a block
 * of `blockDuration` once the count passes the limit, ended early by a hit under a higher limit
 * that the count does not pass.
 * It replaced @nestjs/throttler's in-memory storage (with the library's guard), which kept a
 * timer per hit: a million hits in a window were a million timers, and arming one cost more than
 * the rest of the count.
 */
export class MemoryThrottlerStorage implements RateLimitStorage, OnApplicationShutdown {
  private readonly counters = new Map<string, Counter>();
  private readonly pruning = setInterval(() => this.prune(), PRUNE_INTERVAL_MS).unref();

  constructor(private readonly now: () => number = Date.now) {}

  increment(hit: RateLimitHit): Promise<RateLimitRecord> {
    return Promise.resolve(this.hit(hit));
  }

  onApplicationShutdown(): void {
    clearInterval(this.pruning);
  }

  private hit({ key, scope, ttl, limit, blockDuration }: RateLimitHit): RateLimitRecord {
    const id = `${key}:${scope}`;
    const now = this.now();
    let counter = this.counters.get(id);
    if (!counter) {
      counter = { hits: 0, windowEnds: 0, blockEnds: 0, blockLimit: 0 };
      this.counters.set(id, counter);
    }
    if (counter.windowEnds <= now) {
      counter.hits = 0;
      counter.windowEnds = now + ttl;
    }
    counter.hits += 1;
    // Redis drops a block key when it runs out; a count still past the limit blocks again.
    if (counter.blockEnds <= now) counter.blockEnds = 0;
    // A limit raised above the count since the block started ends it (the count stays).
    if (counter.hits <= limit && limit > counter.blockLimit) counter.blockEnds = 0;
    if (counter.blockEnds === 0 && counter.hits > limit) {
      counter.blockEnds = now + blockDuration;
      counter.blockLimit = limit;
    }
    const isBlocked = counter.blockEnds !== 0;
    return {
      totalHits: counter.hits,
      timeToExpire: Math.ceil((counter.windowEnds - now) / 1000),
      isBlocked,
      timeToBlockExpire: isBlocked ? Math.ceil((counter.blockEnds - now) / 1000) : 0,
    };
  }

  private prune(): void {
    const now = this.now();
    for (const [id, counter] of this.counters)
      if (counter.windowEnds <= now && counter.blockEnds <= now) this.counters.delete(id);
  }
}

import type { OnApplicationShutdown } from '@nestjs/common';
import type {
  RateLimitCount,
  RateLimitHit,
  RateLimitRecord,
  RateLimitStorage,
} from './rate-limit-storage';

interface Counter {
  /** Hits admitted in the window; refused hits are not counted. */
  hits: number;
  /** When the window (started by its first hit) ends, epoch ms; 0 before it starts. */
  windowEnds: number;
  /** When the cool-down ends, epoch ms; 0 while there is none. */
  blockEnds: number;
  /** The limit the cool-down was started under. */
  blockLimit: number;
}

/** How often counters whose window and cool-down have both ended are dropped. */
const PRUNE_INTERVAL_MS = 60_000;

/**
 * Rate-limit counts in this process: without Redis (one replica), and while Redis is down
 * (FallbackThrottlerStorage). The rules of RedisThrottlerStorage's script, step for step and to
 * the millisecond (a window or cool-down is over at its last millisecond, where Redis' PTTL
 * answers 0), so that a key's budget means the same in both: see that script for the rules.
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

  peek(key: string, scope: string): Promise<RateLimitCount> {
    const counter = this.counters.get(`${key}:${scope}`);
    const now = this.now();
    // Ended as steps 1 and 2 of a hit end them.
    const running = counter !== undefined && counter.windowEnds > now;
    return Promise.resolve({
      hits: running ? counter.hits : 0,
      windowEndsInSeconds: running ? Math.ceil((counter.windowEnds - now) / 1000) : 0,
      blockedForSeconds:
        counter && counter.blockEnds > now ? Math.ceil((counter.blockEnds - now) / 1000) : 0,
    });
  }

  /** Forgets every count and cool-down: FallbackThrottlerStorage's outages each start from zero. */
  clear(): void {
    this.counters.clear();
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
    // 1. A window that has ended leaves no count.
    if (counter.windowEnds <= now) {
      counter.hits = 0;
      counter.windowEnds = 0;
    }
    // 2. A cool-down that has ended, or one under a limit since raised above the count, is over.
    if (counter.blockEnds <= now) counter.blockEnds = 0;
    if (counter.blockEnds !== 0 && limit > counter.blockLimit && counter.hits < limit)
      counter.blockEnds = 0;
    if (counter.blockEnds === 0) {
      // 3. Within the budget: admitted and counted; the first hit starts the window.
      if (counter.hits < limit) {
        counter.hits += 1;
        if (counter.windowEnds === 0) counter.windowEnds = now + ttl;
        return this.record(counter, now);
      }
      // 4. Over it: a cool-down starts, and it and the window end together, at the later end.
      counter.blockEnds = Math.max(counter.windowEnds, now + blockDuration);
      counter.blockLimit = limit;
      counter.windowEnds = counter.blockEnds;
    }
    // 5. Refused, and not counted.
    return this.record(counter, now);
  }

  private record(counter: Counter, now: number): RateLimitRecord {
    const isBlocked = counter.blockEnds !== 0;
    return {
      totalHits: counter.hits,
      timeToExpire: counter.windowEnds === 0 ? 0 : Math.ceil((counter.windowEnds - now) / 1000),
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

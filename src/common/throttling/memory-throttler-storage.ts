import type { OnApplicationShutdown } from '@nestjs/common';
import { monotonicNow } from '../clock/monotonic';
import type {
  RateLimitCount,
  RateLimitHit,
  RateLimitRecord,
  RateLimitStorage,
} from './rate-limit-storage';

/** A key's count, as this storage keeps it (and FallbackThrottlerStorage keeps Redis' answers). */
export interface RateLimitCounter {
  /** Hits admitted in the window; refused hits are not counted. */
  hits: number;
  /** When the window (started by its first hit) ends, by the storage's `now`; 0 before it. */
  windowEnds: number;
  /** When the cool-down ends, by the storage's `now`; 0 while there is none. */
  blockEnds: number;
  /** The limit the cool-down was started under. */
  blockLimit: number;
}

/** How often counters whose window and cool-down have both ended are dropped. */
const PRUNE_INTERVAL_MS = 60_000;

/**
 * The most counters kept (about 35 MB): one per key and per address that failed to authenticate,
 * and failures from new addresses cost a client nothing (docs/decisions.md, "Rate limits").
 */
export const MAX_COUNTERS = 100_000;
/** At the cap, how often ended counters are looked for; in between the oldest windows go. */
const FULL_PRUNE_INTERVAL_MS = 1_000;

/**
 * Rate-limit counts in this process: without Redis (one replica), and while Redis is down
 * (FallbackThrottlerStorage). The rules of RedisThrottlerStorage's script, step for step and to
 * the millisecond (a window or cool-down is over at its last millisecond, where Redis' PTTL
 * answers 0), so that a key's budget means the same in both: see that script for the rules.
 * Unlike Redis' memory, its counters are capped (MAX_COUNTERS): past it, the oldest windows go.
 * It replaced @nestjs/throttler's in-memory storage (with the library's guard), which kept a
 * timer per hit: a million hits in a window were a million timers, and arming one cost more than
 * the rest of the count.
 */
export class MemoryThrottlerStorage implements RateLimitStorage, OnApplicationShutdown {
  /** In the order their windows started: a counter whose window ends is moved to the back. */
  private readonly counters = new Map<string, RateLimitCounter>();
  private readonly pruning = setInterval(() => this.prune(), PRUNE_INTERVAL_MS).unref();
  private prunedAt = 0;

  /**
   * `seedOf`: where a key's count starts when this storage has none, by `${key}:${scope}`
   * (FallbackThrottlerStorage: what Redis last answered); a copy is counted on. Else from zero.
   */
  constructor(
    private readonly now: () => number = monotonicNow,
    private readonly maxCounters = MAX_COUNTERS,
    private readonly seedOf: (id: string) => RateLimitCounter | undefined = () => undefined,
  ) {}

  increment(hit: RateLimitHit): Promise<RateLimitRecord> {
    return Promise.resolve(this.hit(hit));
  }

  peek(key: string, scope: string): Promise<RateLimitCount> {
    const id = `${key}:${scope}`;
    const counter = this.counters.get(id) ?? this.seedOf(id);
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

  /** Forgets every count and cool-down: FallbackThrottlerStorage's, at each switch of storage. */
  clear(): void {
    this.counters.clear();
  }

  onApplicationShutdown(): void {
    clearInterval(this.pruning);
  }

  private hit(hit: RateLimitHit): RateLimitRecord {
    const id = `${hit.key}:${hit.scope}`;
    const now = this.now();
    let counter = this.counters.get(id);
    if (!counter) {
      if (this.counters.size >= this.maxCounters) this.makeRoom(now);
      const seed = this.seedOf(id);
      counter = seed ? { ...seed } : { hits: 0, windowEnds: 0, blockEnds: 0, blockLimit: 0 };
      this.counters.set(id, counter);
    } else if (counter.windowEnds <= now) {
      // A new window starts (step 1): evicted last, not first for having been seen long ago.
      this.counters.delete(id);
      this.counters.set(id, counter);
    }
    return countHit(counter, hit, now);
  }

  private prune(): void {
    const now = this.now();
    this.prunedAt = now;
    for (const [id, counter] of this.counters)
      if (counter.windowEnds <= now && counter.blockEnds <= now) this.counters.delete(id);
  }

  /**
   * At the cap: ended counters go first (looked for at most once a second, so that a flood of
   * new addresses does not scan the map at each one), else the hundredth whose windows started
   * first, each starting from zero if its key comes back. A hundredth, not one: a new iterator
   * steps over every counter deleted at the front of the map since V8 last compacted it, and one
   * per hit took a tenth of a millisecond each under a flood (an iterator kept from one eviction
   * to the next would hold on to every table the map has outgrown).
   */
  private makeRoom(now: number): void {
    if (now - this.prunedAt >= FULL_PRUNE_INTERVAL_MS) this.prune();
    if (this.counters.size < this.maxCounters) return;
    let evict = Math.ceil(this.maxCounters / 100);
    for (const id of this.counters.keys()) {
      this.counters.delete(id);
      if (--evict === 0) break;
    }
  }
}

/**
 * Counts `hit` on `counter` (changed in place) at `now`, by the rules of RedisThrottlerStorage's
 * script, step for step; answers what the script answers.
 */
export function countHit(
  counter: RateLimitCounter,
  { ttl, limit, blockDuration }: RateLimitHit,
  now: number,
): RateLimitRecord {
  // 0. Nothing runs longer than what these settings start (a seed read from Redis, started
  //    under a longer window, ends within this one).
  const longest = now + Math.max(ttl, blockDuration);
  counter.windowEnds = Math.min(counter.windowEnds, longest);
  counter.blockEnds = Math.min(counter.blockEnds, longest);
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
      return recordOf(counter, now);
    }
    // 4. Over it: a cool-down starts, and it and the window end together, at the later end.
    counter.blockEnds = Math.max(counter.windowEnds, now + blockDuration);
    counter.blockLimit = limit;
    counter.windowEnds = counter.blockEnds;
  }
  // 5. Refused, and not counted.
  return recordOf(counter, now);
}

function recordOf(counter: RateLimitCounter, now: number): RateLimitRecord {
  const isBlocked = counter.blockEnds !== 0;
  return {
    totalHits: counter.hits,
    timeToExpire: counter.windowEnds === 0 ? 0 : Math.ceil((counter.windowEnds - now) / 1000),
    isBlocked,
    timeToBlockExpire: isBlocked ? Math.ceil((counter.blockEnds - now) / 1000) : 0,
  };
}

import type Redis from 'ioredis';
import type {
  RateLimitCount,
  RateLimitHit,
  RateLimitRecord,
  RateLimitStorage,
} from './rate-limit-storage';

/**
 * The rate-limit rules, per hit: a fixed window started by its first hit; hits are admitted
 * while the count is under the limit, and counted; the hit that finds the budget spent starts a
 * cool-down (a block) of `blockDuration`, or to the window's end if that is later, and the
 * window ends with it. Refused hits are not counted. So `Retry-After` (the block's end) is the
 * truth: a client that waits it out finds a new window with its full budget (refused hits had
 * been counted into a window started during the block, which a client told `Retry-After: 6`
 * found over-budget after 6 s, and got a new 10: found by an audit). The block holds the limit
 * it was started under: a hit under a higher limit that the count is under (a key's limit
 * raised by PATCH, a larger class budget) ends it, and the count stays. A window or block in
 * its last millisecond (PTTL 0) is over, as the memory storage reads `ends <= now` (the script
 * reset the count there, and only there, before). Neither runs longer than the hit's own
 * settings start one (the longer of `ttl` and `blockDuration`): shortened by a restart with a
 * shorter RATE_LIMIT_WINDOW_SECONDS, windows and blocks kept the old length, a key refused for
 * up to the old window under headers naming the new one (a numbers audit).
 * For hit i (from 1): KEYS[2i-1] hits, KEYS[2i] block; ARGV[3i-2..3i] ttl ms, limit, block ms.
 * Answers, per hit, {hits admitted in the window, ms to the window's end, blocked 0|1, ms to the
 * block's end}, flattened. The hits of one call are counted one after the other, exactly as if
 * sent alone, and Redis runs the script atomically. MemoryThrottlerStorage follows it step for
 * step. The same keys as @nest-lab/throttler-storage-redis (which this replaced); blocks set
 * before they held their limit hold 1, and are read as blocks under a limit of 1.
 */
const HITS_SCRIPT = `
local answers = {}
for i = 1, #KEYS / 2 do
  local hitsKey, blockKey = KEYS[2 * i - 1], KEYS[2 * i]
  local ttl = tonumber(ARGV[3 * i - 2])
  local limit = tonumber(ARGV[3 * i - 1])
  local blockDuration = tonumber(ARGV[3 * i])
  -- 0. Nothing runs longer than what these settings start: one started under a longer window
  --    ends within it.
  local longest = math.max(ttl, blockDuration)
  -- 1. A window that has ended leaves no count.
  local toExpire = redis.call('PTTL', hitsKey)
  if toExpire > longest then
    redis.call('PEXPIRE', hitsKey, longest)
    toExpire = longest
  end
  local hits = 0
  if toExpire > 0 then
    hits = tonumber(redis.call('GET', hitsKey))
  else
    toExpire = 0
  end
  -- 2. A block that has ended, or one under a limit since raised above the count, is over.
  local blocked = false
  local toBlockExpire = redis.call('PTTL', blockKey)
  if toBlockExpire > longest then
    redis.call('PEXPIRE', blockKey, longest)
    toBlockExpire = longest
  end
  if toBlockExpire > 0 then
    local blockLimit = tonumber(redis.call('GET', blockKey)) or 0
    if limit > blockLimit and hits < limit then
      redis.call('DEL', blockKey)
    else
      blocked = true
    end
  end
  if not blocked then
    toBlockExpire = 0
    if hits < limit then
      -- 3. Within the budget: admitted and counted; the first hit starts the window.
      hits = hits + 1
      if toExpire > 0 then
        redis.call('INCR', hitsKey)
      else
        redis.call('SET', hitsKey, hits, 'PX', ttl)
        toExpire = ttl
      end
    else
      -- 4. Over it: a block starts, and it and the window end together, at the later end.
      toBlockExpire = math.max(toExpire, blockDuration)
      redis.call('SET', blockKey, limit, 'PX', toBlockExpire)
      redis.call('PEXPIRE', hitsKey, toBlockExpire)
      toExpire = toBlockExpire
      blocked = true
    end
  end
  -- 5. A blocked hit is refused, and not counted.
  answers[#answers + 1] = hits
  answers[#answers + 1] = toExpire
  answers[#answers + 1] = blocked and 1 or 0
  answers[#answers + 1] = toBlockExpire
end
return answers
`;

/** Most hits sent in one script call: bounds how long one call holds Redis. */
export const MAX_HITS_PER_CALL = 64;

interface HitsCommand {
  /** numkeys, then the keys (two per hit), then three arguments per hit. */
  throttleHits(...args: (string | number)[]): Promise<number[]>;
}

interface PendingHit {
  hit: RateLimitHit;
  resolve: (record: RateLimitRecord) => void;
  reject: (error: unknown) => void;
}

/**
 * Rate-limit counts in Redis, exact across replicas. The hits of requests that arrive together
 * (in one turn of the event loop) are sent as one script call, by its SHA (EVALSHA; ioredis
 * loads it on a NOSCRIPT): one write to Redis and one reply per turn rather than per request.
 * A system call is the largest cost of a hit on a small VM; waiting for the turn's end
 * (setImmediate) costs no measurable latency. Every request still waits for its own count.
 */
export class RedisThrottlerStorage implements RateLimitStorage {
  private readonly redis: Redis & HitsCommand;
  private pending: PendingHit[] = [];

  constructor(redis: Redis) {
    redis.defineCommand('throttleHits', { lua: HITS_SCRIPT });
    this.redis = redis as Redis & HitsCommand;
  }

  increment(hit: RateLimitHit): Promise<RateLimitRecord> {
    return new Promise((resolve, reject) => {
      if (this.pending.length === 0) setImmediate(this.flush);
      this.pending.push({ hit, resolve, reject });
    });
  }

  /** One round trip (a MULTI): the count if its window runs, the block's time left. */
  async peek(key: string, scope: string): Promise<RateLimitCount> {
    const { hitsKey, blockKey } = keysOf(key, scope);
    const answers = await this.redis.multi().get(hitsKey).pttl(hitsKey).pttl(blockKey).exec();
    const [hits, toExpire, toBlockExpire] = (answers ?? []).map(([error, value]) => {
      if (error) throw error;
      return Number(value);
    });
    // Read as the script reads them: a window or block at PTTL 0 or less is over.
    return {
      hits: toExpire > 0 ? hits : 0,
      windowEndsInSeconds: toExpire > 0 ? Math.ceil(toExpire / 1000) : 0,
      blockedForSeconds: toBlockExpire > 0 ? Math.ceil(toBlockExpire / 1000) : 0,
    };
  }

  private readonly flush = (): void => {
    const hits = this.pending;
    this.pending = [];
    for (let start = 0; start < hits.length; start += MAX_HITS_PER_CALL)
      this.send(hits.slice(start, start + MAX_HITS_PER_CALL));
  };

  /** Plain loops: this runs once per turn under load, over every hit of the turn. */
  private send(hits: PendingHit[]): void {
    const keys: string[] = [];
    const args: number[] = [];
    for (const { hit } of hits) {
      const { hitsKey, blockKey } = keysOf(hit.key, hit.scope);
      keys.push(hitsKey, blockKey);
      args.push(hit.ttl, hit.limit, hit.blockDuration);
    }
    this.redis.throttleHits(keys.length, ...keys, ...args).then(
      (answers) => {
        for (let i = 0; i < hits.length; i++) hits[i].resolve(recordOf(answers, 4 * i));
      },
      (error: unknown) => {
        for (const pending of hits) pending.reject(error);
      },
    );
  }
}

/** A key's two entries; hash tags keep them in one slot. */
function keysOf(key: string, scope: string): { hitsKey: string; blockKey: string } {
  const tag = `{${key}:${scope}}`;
  return { hitsKey: `${tag}:hits`, blockKey: `${tag}:blocked` };
}

/** The record of the hit whose four answers start at `at`. */
function recordOf(answers: number[], at: number): RateLimitRecord {
  return {
    totalHits: answers[at],
    timeToExpire: Math.ceil(answers[at + 1] / 1000),
    isBlocked: answers[at + 2] === 1,
    timeToBlockExpire: Math.ceil(answers[at + 3] / 1000),
  };
}

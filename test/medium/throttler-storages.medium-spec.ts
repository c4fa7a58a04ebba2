import Redis from 'ioredis';
import { MemoryThrottlerStorage } from '../../src/common/throttling/memory-throttler-storage';
import {
  MAX_HITS_PER_CALL,
  RedisThrottlerStorage,
} from '../../src/common/throttling/redis-throttler-storage';
import { testRedisPrefix, testRedisUrl } from '../support/test-app';

/**
 * The two rate-limit storages against each other: the same hits give the same answers (a key's
 * budget means the same with and without Redis), and Redis counts hits sent together exactly.
 */
describe('Rate-limit storages', () => {
  let redis: Redis;
  let scripts: number;

  beforeAll(() => {
    redis = new Redis(testRedisUrl(), { keyPrefix: testRedisPrefix() });
    const send = redis.sendCommand.bind(redis);
    redis.sendCommand = (command: { name: string }, ...rest: unknown[]) => {
      if (command.name === 'evalsha' || command.name === 'eval') scripts += 1;
      return (send as (...args: unknown[]) => unknown)(command, ...rest);
    };
  });
  afterAll(() => redis.quit());
  beforeEach(() => (scripts = 0));

  it('answer alike, hit for hit, through a window, a block and the next window', async () => {
    const memory = new MemoryThrottlerStorage();
    const shared = new RedisThrottlerStorage(redis);
    const key = `ratelimit:default:alike-${Date.now()}`;
    // 5 s windows and blocks (whole seconds are what the answers report): wide enough to hold
    // the Redis round trips of the three hits on a loaded machine.
    const hit = (storage: MemoryThrottlerStorage | RedisThrottlerStorage) =>
      storage.increment({ key, scope: 'default', ttl: 5000, limit: 2, blockDuration: 5000 });
    const answers = async () => Promise.all([hit(memory), hit(shared)]);
    try {
      for (const expected of [
        { totalHits: 1, isBlocked: false },
        { totalHits: 2, isBlocked: false },
        { totalHits: 3, isBlocked: true },
      ]) {
        const [inMemory, inRedis] = await answers();
        expect(inMemory).toEqual(inRedis);
        expect(inRedis).toMatchObject(expected);
      }
      await new Promise((resolve) => setTimeout(resolve, 5100));
      const [inMemory, inRedis] = await answers();
      expect(inMemory).toEqual(inRedis);
      expect(inRedis).toMatchObject({ totalHits: 1, isBlocked: false, timeToBlockExpire: 0 });
    } finally {
      memory.onApplicationShutdown();
    }
  });

  it('answer alike when a limit raised above the count lifts a block, or a lowered one keeps it', async () => {
    const memory = new MemoryThrottlerStorage();
    const shared = new RedisThrottlerStorage(redis);
    const key = `ratelimit:default:raised-${Date.now()}`;
    // A window shorter than the block, so that a block can outlive its window; 5 s, so that the
    // window holds the seven steps' Redis round trips on a loaded machine.
    const hit = (storage: MemoryThrottlerStorage | RedisThrottlerStorage, limit: number) =>
      storage.increment({ key, scope: 'default', ttl: 5000, limit, blockDuration: 60_000 });
    // Each step: a hit under `limit` to both storages, which answer alike, and as expected.
    const steps = async (
      all: readonly (readonly [number, { totalHits: number; isBlocked: boolean }])[],
    ) => {
      for (const [limit, expected] of all) {
        const [inMemory, inRedis] = await Promise.all([hit(memory, limit), hit(shared, limit)]);
        expect(inMemory).toEqual(inRedis);
        expect(inRedis).toMatchObject(expected);
      }
    };
    try {
      await steps([
        [2, { totalHits: 1, isBlocked: false }],
        [2, { totalHits: 2, isBlocked: false }],
        [2, { totalHits: 3, isBlocked: true }],
        [3, { totalHits: 4, isBlocked: true }],
        [4, { totalHits: 5, isBlocked: true }],
        [6, { totalHits: 6, isBlocked: false }],
        [2, { totalHits: 7, isBlocked: true }],
      ]);
      await new Promise((resolve) => setTimeout(resolve, 5100));
      await steps([
        [2, { totalHits: 1, isBlocked: true }],
        [3, { totalHits: 2, isBlocked: false }],
      ]);
    } finally {
      memory.onApplicationShutdown();
    }
  });

  it('counts hits sent together exactly, in one script call per batch of them', async () => {
    const storage = new RedisThrottlerStorage(redis);
    const keys = [1, 2, 3].map((n) => `ratelimit:default:batch-${Date.now()}-${n}`);
    const hits = 200;
    const records = await Promise.all(
      Array.from({ length: hits }, (_, i) =>
        storage.increment({
          key: keys[i % 3],
          scope: 'default',
          ttl: 60_000,
          limit: 50,
          blockDuration: 60_000,
        }),
      ),
    );
    for (const [index, key] of keys.entries()) {
      const own = records.filter((_, i) => i % 3 === index);
      // Each hit got its own count: 1..n in order, blocked past 50.
      expect(own.map((record) => record.totalHits)).toEqual(own.map((_, i) => i + 1));
      expect(own.filter((record) => !record.isBlocked)).toHaveLength(50);
      expect(await redis.get(`{${key}:default}:hits`)).toBe(String(own.length));
    }
    // NOSCRIPT on a fresh connection may add one call per batch.
    expect(scripts).toBeLessThanOrEqual(2 * Math.ceil(hits / MAX_HITS_PER_CALL));
  });

  it('fails every hit of a batch when Redis does, so that each falls back on its own', async () => {
    const broken = new Redis('redis://127.0.0.1:1', {
      lazyConnect: true,
      maxRetriesPerRequest: 0,
      enableOfflineQueue: false,
    });
    const storage = new RedisThrottlerStorage(broken);
    const outcomes = await Promise.allSettled(
      [1, 2, 3].map(() =>
        storage.increment({
          key: 'ratelimit:default:down',
          scope: 'default',
          ttl: 60_000,
          limit: 5,
          blockDuration: 60_000,
        }),
      ),
    );
    expect(outcomes.map((outcome) => outcome.status)).toEqual(['rejected', 'rejected', 'rejected']);
    broken.disconnect();
  });
});

import { Logger } from '@nestjs/common';
import { REDIS_COMMAND_TIMEOUT_MS, RedisConnection } from '../../src/common/redis/redis-connection';
import { FallbackThrottlerStorage } from '../../src/common/throttling/fallback-throttler-storage';
import type { RateLimitHit } from '../../src/common/throttling/rate-limit-storage';
import { RedisThrottlerStorage } from '../../src/common/throttling/redis-throttler-storage';
import { testRedisPrefix, testRedisUrl } from '../support/test-app';

const HOUR = 3_600_000;

/** Holds the event loop for `ms`: nothing is read from any socket meanwhile. */
function stall(ms: number): void {
  const end = performance.now() + ms;
  while (performance.now() < end) {
    // A flood's request handling, as far as the event loop can tell.
  }
}

/**
 * The rate-limit storage of a replica with Redis, through a flood that stalls its event loop
 * past the command timeout: Redis answers in microseconds, but its replies are read only after
 * the commands timed out. An audit saw each replica then count from zero in memory: a key in its
 * hour-long cool-down was admitted 200 times by one replica.
 */
describe('Rate limits through a flood that stalls the process', () => {
  let connection: RedisConnection;
  let storage: FallbackThrottlerStorage;

  beforeEach(async () => {
    jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    jest.spyOn(Logger.prototype, 'log').mockImplementation(() => undefined);
    connection = new RedisConnection({ url: testRedisUrl(), keyPrefix: testRedisPrefix() });
    await connection.onModuleInit();
    storage = new FallbackThrottlerStorage(
      connection,
      new RedisThrottlerStorage(connection.client!),
    );
  });
  afterEach(async () => {
    storage.onApplicationShutdown();
    await connection.onApplicationShutdown();
    jest.restoreAllMocks();
  });

  const hitWith = (limit: number): RateLimitHit => ({
    key: `ratelimit:default:flood-${limit}-${Date.now()}`,
    scope: 'default',
    ttl: HOUR,
    limit,
    blockDuration: HOUR,
  });

  /**
   * Sends `count` hits at once, then stalls the event loop past the command timeout before
   * their replies can be read; answers how many were admitted.
   */
  async function flood(hit: RateLimitHit, count: number): Promise<number> {
    const answers = Array.from({ length: count }, () => storage.increment(hit));
    // The hits go out at the end of this turn (RedisThrottlerStorage), before this callback.
    await new Promise((resolve) => setImmediate(resolve));
    stall(REDIS_COMMAND_TIMEOUT_MS + 200);
    const records = await Promise.all(answers);
    return records.filter((record) => !record.isBlocked).length;
  }

  it('admits none of a key in its cool-down, and keeps counting in Redis', async () => {
    const hit = hitWith(3);
    for (let i = 0; i < 3; i++) expect((await storage.increment(hit)).isBlocked).toBe(false);
    expect(await storage.increment(hit)).toMatchObject({ isBlocked: true });
    const warn = jest.mocked(Logger.prototype.warn);
    expect(await flood(hit, 300)).toBe(0);
    // The commands timed out (the flood was a flood)...
    expect(warn.mock.calls.map(([message]) => String(message))).toEqual([
      expect.stringMatching(/^Redis command timed out while this process stalled/),
    ]);
    // ...and Redis, which answered them all, is still used.
    expect(connection.ready()).toBe(connection.client);
    expect(await storage.increment(hit)).toMatchObject({ isBlocked: true, totalHits: 3 });
  }, 20_000);

  it('admits what was left of the budget of a key part spent', async () => {
    const hit = hitWith(10);
    for (let i = 0; i < 6; i++) await storage.increment(hit);
    expect(await flood(hit, 300)).toBe(4);
    expect(connection.ready()).toBe(connection.client);
  }, 20_000);
});

import { MAX_COUNTERS, MemoryThrottlerStorage } from './memory-throttler-storage';

const HIT = {
  key: 'ratelimit:default:k',
  scope: 'default',
  ttl: 10_000,
  limit: 2,
  blockDuration: 10_000,
};

describe(MemoryThrottlerStorage.name, () => {
  let now = 1_000_000;
  let storage: MemoryThrottlerStorage;
  const hit = (limit = 2) => storage.increment({ ...HIT, limit });

  beforeEach(() => {
    now = 1_000_000;
    storage = new MemoryThrottlerStorage(() => now);
  });
  afterEach(() => storage.onApplicationShutdown());

  it('counts hits in a fixed window started by the first hit', async () => {
    expect(await hit()).toEqual({
      totalHits: 1,
      timeToExpire: 10,
      isBlocked: false,
      timeToBlockExpire: 0,
    });
    now += 4_000;
    expect(await hit()).toMatchObject({ totalHits: 2, timeToExpire: 6, isBlocked: false });
    now += 6_000;
    expect(await hit()).toMatchObject({ totalHits: 1, timeToExpire: 10, isBlocked: false });
  });

  it('blocks for a window from the hit past the limit, without counting refused hits', async () => {
    await hit();
    now += 4_000;
    await hit();
    // The window would end in 6 s; the cool-down is a whole window, and the window ends with it.
    expect(await hit()).toEqual({
      totalHits: 2,
      timeToExpire: 10,
      isBlocked: true,
      timeToBlockExpire: 10,
    });
    now += 2_000;
    expect(await hit()).toEqual({
      totalHits: 2,
      timeToExpire: 8,
      isBlocked: true,
      timeToBlockExpire: 8,
    });
  });

  it('admits a client that waits out Retry-After, with the full budget (the audit: 3 per 10 s)', async () => {
    const three = () => storage.increment({ ...HIT, limit: 3 });
    await three();
    now += 6_000;
    await three();
    await three();
    expect(await three()).toMatchObject({ isBlocked: true, timeToBlockExpire: 10 });
    // The first window has ended; the hits refused in the cool-down start no new one.
    now += 5_000;
    for (let i = 0; i < 3; i++)
      expect(await three()).toMatchObject({ isBlocked: true, timeToBlockExpire: 5 });
    now += 5_000;
    for (let count = 1; count <= 3; count++)
      expect(await three()).toEqual({
        totalHits: count,
        timeToExpire: 10,
        isBlocked: false,
        timeToBlockExpire: 0,
      });
  });

  it('ends a window and a cool-down at their last millisecond, as Redis reads PTTL 0', async () => {
    await hit();
    await hit();
    expect(await hit()).toMatchObject({ isBlocked: true, timeToBlockExpire: 10 });
    now += 9_999;
    expect(await hit()).toMatchObject({ totalHits: 2, isBlocked: true, timeToBlockExpire: 1 });
    now += 1;
    expect(await hit()).toEqual({
      totalHits: 1,
      timeToExpire: 10,
      isBlocked: false,
      timeToBlockExpire: 0,
    });
  });

  // The auth-failure lockout reads the shared count by peek: it must end them where a hit does.
  it('peeks a window and a cool-down as ended at their last millisecond, as a hit ends them', async () => {
    const peek = () => storage.peek(HIT.key, HIT.scope);
    await hit();
    now += 9_999;
    expect(await peek()).toEqual({ hits: 1, windowEndsInSeconds: 1, blockedForSeconds: 0 });
    now += 1;
    expect(await peek()).toEqual({ hits: 0, windowEndsInSeconds: 0, blockedForSeconds: 0 });
    await hit();
    await hit();
    await hit();
    now += 9_999;
    expect(await peek()).toEqual({ hits: 2, windowEndsInSeconds: 1, blockedForSeconds: 1 });
    now += 1;
    expect(await peek()).toEqual({ hits: 0, windowEndsInSeconds: 0, blockedForSeconds: 0 });
  });

  it('blocks until the window ends when that is later than blockDuration', async () => {
    const short = () => storage.increment({ ...HIT, limit: 1, blockDuration: 2_000 });
    await short();
    now += 1_000;
    expect(await short()).toMatchObject({ isBlocked: true, timeToBlockExpire: 9 });
    now += 9_000;
    expect(await short()).toMatchObject({ totalHits: 1, isBlocked: false });
  });

  it('lifts a block at the first hit under a limit raised above the count, which it keeps', async () => {
    await hit(2);
    await hit(2);
    expect(await hit(2)).toMatchObject({ totalHits: 2, isBlocked: true });
    expect(await hit(2)).toMatchObject({ totalHits: 2, isBlocked: true });
    expect(await hit(3)).toEqual({
      totalHits: 3,
      timeToExpire: 10,
      isBlocked: false,
      timeToBlockExpire: 0,
    });
    expect(await hit(3)).toMatchObject({ totalHits: 3, isBlocked: true, timeToBlockExpire: 10 });
  });

  it('keeps a block under a lowered limit, or one raised but not above the count', async () => {
    await hit(4);
    await hit(4);
    await hit(4);
    expect(await hit(1)).toMatchObject({ totalHits: 3, isBlocked: true, timeToBlockExpire: 10 });
    // The same cool-down, running down: a client retrying under the raised limit is not locked
    // out for a new window at each try.
    now += 4_000;
    expect(await hit(3)).toMatchObject({ totalHits: 3, isBlocked: true, timeToBlockExpire: 6 });
    expect(await hit(2)).toMatchObject({ totalHits: 3, isBlocked: true, timeToBlockExpire: 6 });
    expect(await hit(4)).toMatchObject({ totalHits: 4, isBlocked: false });
  });

  it("keeps running windows and cool-downs through the minute's pruning, and lets ended ones go", async () => {
    // The pruning's timer is the storage's own: built under fake timers, so that it runs here.
    storage.onApplicationShutdown();
    jest.useFakeTimers();
    try {
      storage = new MemoryThrottlerStorage(() => now);
      const hour = { ...HIT, ttl: 3_600_000, blockDuration: 3_600_000 };
      await storage.increment({ ...hour, key: 'ratelimit:default:counting' });
      await storage.increment({ ...hour, key: 'ratelimit:default:blocked', limit: 1 });
      await storage.increment({ ...hour, key: 'ratelimit:default:blocked', limit: 1 });
      await storage.increment({ ...HIT, key: 'ratelimit:default:ended' });
      now += 61_000;
      jest.advanceTimersByTime(61_000);

      expect(await storage.peek('ratelimit:default:counting', 'default')).toMatchObject({
        hits: 1,
      });
      expect(await storage.increment({ ...hour, key: 'ratelimit:default:counting' })).toMatchObject(
        { totalHits: 2, isBlocked: false },
      );
      expect(
        await storage.increment({ ...hour, key: 'ratelimit:default:blocked', limit: 1 }),
      ).toMatchObject({ totalHits: 1, isBlocked: true, timeToBlockExpire: 3539 });
      // The ended window's counter is gone from memory, not only read as ended.
      expect(storage['counters'].has('ratelimit:default:ended:default')).toBe(false);
    } finally {
      storage.onApplicationShutdown();
      jest.useRealTimers();
    }
  });

  // An audit's finding: a key refused for an hour was told Retry-After 25199 after the wall
  // clock was set back 6 h. Its cool-down is kept on a monotonic clock (docs/decisions.md,
  // "Clocks").
  it('keeps a cool-down to its length by default, though the wall clock is set back', async () => {
    storage.onApplicationShutdown();
    jest.useFakeTimers();
    try {
      storage = new MemoryThrottlerStorage();
      const hour = { ...HIT, limit: 1, ttl: 3_600_000, blockDuration: 3_600_000 };
      await storage.increment(hour);
      jest.advanceTimersByTime(2_000);
      expect(await storage.increment(hour)).toMatchObject({ timeToBlockExpire: 3600 });
      jest.setSystemTime(Date.now() - 6 * 3_600_000);
      jest.advanceTimersByTime(1_000);
      expect(await storage.increment(hour)).toMatchObject({
        isBlocked: true,
        timeToBlockExpire: 3599,
      });
    } finally {
      storage.onApplicationShutdown();
      jest.useRealTimers();
    }
  });

  describe('at its cap', () => {
    const HOUR = { ...HIT, scope: 'auth-failures', ttl: 3_600_000, blockDuration: 3_600_000 };
    const fail = (address: string, ttl = HOUR.ttl) =>
      storage.increment({ ...HOUR, key: `authfail:${address}`, ttl });
    const failures = async (address: string) =>
      (await storage.peek(`authfail:${address}`, 'auth-failures')).hits;

    it('holds MAX_COUNTERS counters however many addresses fail in a window, the newest counted', async () => {
      for (let i = 0; i < MAX_COUNTERS + 1_000; i++)
        await fail(`10.${i >> 16}.${(i >> 8) & 255}.${i & 255}`);
      expect(storage['counters'].size).toBeLessThanOrEqual(MAX_COUNTERS);
      expect(await failures('10.0.0.0')).toBe(0);
      expect(await failures('10.1.137.39')).toBe(1);
    });

    it('drops ended counters first, then the one whose window started first', async () => {
      storage.onApplicationShutdown();
      storage = new MemoryThrottlerStorage(() => now, 3);
      await fail('ended', 10_000);
      await fail('first');
      await fail('second');
      now += 10_000;
      await fail('third');
      expect([await failures('first'), await failures('second'), await failures('third')]).toEqual([
        1, 1, 1,
      ]);
      await fail('fourth');
      expect(await failures('first')).toBe(0);
      expect(storage['counters'].size).toBe(3);
    });

    it('drops a hundredth of the counters, those whose windows started first, when none has ended', async () => {
      storage.onApplicationShutdown();
      storage = new MemoryThrottlerStorage(() => now, 200);
      for (let i = 0; i < 200; i++) await fail(`address-${i}`);
      await fail('newest');
      expect(storage['counters'].size).toBe(199);
      expect(await Promise.all(['0', '1', '2'].map((i) => failures(`address-${i}`)))).toEqual([
        0, 0, 1,
      ]);
      expect(await failures('newest')).toBe(1);
    });

    it("keeps a busy key's running window over counters that started after it was first seen", async () => {
      storage.onApplicationShutdown();
      storage = new MemoryThrottlerStorage(() => now, 3);
      const busy = () => storage.increment({ ...HIT, key: 'ratelimit:default:busy' });
      await busy();
      await fail('first');
      now += 10_000;
      await busy();
      await fail('second');
      await fail('third');
      expect(await busy()).toMatchObject({ totalHits: 2, isBlocked: false });
      expect(await failures('first')).toBe(0);
    });
  });

  it('keeps keys and scopes apart', async () => {
    await hit(1);
    expect(await hit(1)).toMatchObject({ isBlocked: true });
    expect(await storage.increment({ ...HIT, key: 'ratelimit:default:other' })).toMatchObject({
      totalHits: 1,
      isBlocked: false,
    });
    expect(await storage.increment({ ...HIT, scope: 'auth' })).toMatchObject({
      totalHits: 1,
      isBlocked: false,
    });
  });
});

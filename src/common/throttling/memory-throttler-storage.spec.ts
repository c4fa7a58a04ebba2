import { MemoryThrottlerStorage } from './memory-throttler-storage';

const ONE_PER_WINDOW = {
  key: 'ratelimit:default:k',
  scope: 'default',
  ttl: 10_000,
  limit: 1,
  blockDuration: 5_000,
};

describe(MemoryThrottlerStorage.name, () => {
  let now = 1_000_000;
  let storage: MemoryThrottlerStorage;
  const hit = (limit = 2) => storage.increment({ ...ONE_PER_WINDOW, limit });

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

  it('blocks for blockDuration once the count passes the limit, and keeps counting', async () => {
    await hit();
    await hit();
    expect(await hit()).toMatchObject({ totalHits: 3, isBlocked: true, timeToBlockExpire: 5 });
    now += 2_000;
    expect(await hit()).toMatchObject({ totalHits: 4, isBlocked: true, timeToBlockExpire: 3 });
  });

  it('blocks again when the block ends inside a window still past the limit (as Redis does)', async () => {
    await hit();
    await hit();
    await hit();
    now += 5_000;
    expect(await hit()).toMatchObject({ totalHits: 4, isBlocked: true, timeToBlockExpire: 5 });
    now += 5_000;
    expect(await hit()).toMatchObject({ totalHits: 1, isBlocked: false, timeToBlockExpire: 0 });
  });

  it('lifts a block at the first hit under a limit raised above the count, which it keeps', async () => {
    await hit(2);
    await hit(2);
    expect(await hit(2)).toMatchObject({ totalHits: 3, isBlocked: true });
    expect(await hit(3)).toMatchObject({ totalHits: 4, isBlocked: true });
    expect(await hit(5)).toEqual({
      totalHits: 5,
      timeToExpire: 10,
      isBlocked: false,
      timeToBlockExpire: 0,
    });
    expect(await hit(5)).toMatchObject({ totalHits: 6, isBlocked: true, timeToBlockExpire: 5 });
  });

  it('keeps a block under a lowered limit, or one raised but not above the count', async () => {
    await hit(4);
    await hit(4);
    expect(await hit(1)).toMatchObject({ totalHits: 3, isBlocked: true });
    expect(await hit(1)).toMatchObject({ totalHits: 4, isBlocked: true });
    expect(await hit(4)).toMatchObject({ totalHits: 5, isBlocked: true });
    expect(await hit(5)).toMatchObject({ totalHits: 6, isBlocked: true });
  });

  it('keeps a block that outlived its window under the same limit, not under a raised one', async () => {
    const longBlock = (limit: number) =>
      storage.increment({ ...ONE_PER_WINDOW, limit, ttl: 1_000, blockDuration: 5_000 });
    await longBlock(1);
    expect(await longBlock(1)).toMatchObject({ totalHits: 2, isBlocked: true });
    now += 2_000;
    expect(await longBlock(1)).toMatchObject({
      totalHits: 1,
      isBlocked: true,
      timeToBlockExpire: 3,
    });
    expect(await longBlock(3)).toMatchObject({ totalHits: 2, isBlocked: false });
  });

  it('keeps keys and throttlers apart', async () => {
    await hit(1);
    expect(
      await storage.increment({ ...ONE_PER_WINDOW, key: 'ratelimit:default:other' }),
    ).toMatchObject({
      totalHits: 1,
      isBlocked: false,
    });
    expect(await storage.increment({ ...ONE_PER_WINDOW, scope: 'auth' })).toMatchObject({
      totalHits: 1,
    });
  });
});

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

import { Logger } from '@nestjs/common';
import { RedisConnection } from '../redis/redis-connection';
import { FallbackThrottlerStorage } from './fallback-throttler-storage';
import { RateLimitStorage } from './rate-limit-storage';

function storageWith(
  connected: boolean,
  shared: RateLimitStorage['increment'],
  failed = jest.fn(),
  peek: RateLimitStorage['peek'] = jest.fn(),
) {
  const redis = { ready: () => (connected ? {} : null), failed };
  return new FallbackThrottlerStorage(redis as unknown as RedisConnection, {
    increment: shared,
    peek,
  });
}

const record = { totalHits: 7, timeToExpire: 60, isBlocked: false, timeToBlockExpire: 0 };
const hit = (storage: FallbackThrottlerStorage) =>
  storage.increment({
    key: 'ratelimit:default:k',
    scope: 'default',
    ttl: 60_000,
    limit: 2,
    blockDuration: 60_000,
  });

describe(FallbackThrottlerStorage.name, () => {
  let warned: jest.SpyInstance;
  beforeEach(() => {
    warned = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
  });
  afterEach(() => jest.restoreAllMocks());

  it('counts in Redis while it answers', async () => {
    const shared = jest.fn().mockResolvedValue(record);
    const storage = storageWith(true, shared);
    await expect(hit(storage)).resolves.toEqual(record);
    expect(shared).toHaveBeenCalledTimes(1);
    expect(warned).not.toHaveBeenCalled();
    storage.onApplicationShutdown();
  });

  it('counts in process memory when a Redis command fails, with the same limit and block', async () => {
    const failed = jest.fn();
    const timedOut = jest.fn().mockRejectedValue(new Error('Command timed out'));
    const storage = storageWith(true, timedOut, failed);
    expect((await hit(storage)).totalHits).toBe(1);
    expect((await hit(storage)).isBlocked).toBe(false);
    expect((await hit(storage)).isBlocked).toBe(true);
    // Reported, so that the connection rests Redis instead of waiting on it at every request.
    expect(failed).toHaveBeenCalledWith('Command timed out');
    // Once for the outage, not at every request.
    expect(warned.mock.calls).toEqual([
      ['Redis unavailable (Command timed out): rate limits counted in this process'],
    ]);
    storage.onApplicationShutdown();
  });

  it('reads a count from Redis while it answers, and from process memory when it fails', async () => {
    const shared = { hits: 9, windowEndsInSeconds: 30, blockedForSeconds: 0 };
    const peek = jest.fn().mockResolvedValueOnce(shared).mockRejectedValue(new Error('timed out'));
    const failed = jest.fn();
    const storage = storageWith(true, jest.fn().mockRejectedValue(new Error('down')), failed, peek);
    await expect(storage.peek('ratelimit:default:k', 'default')).resolves.toEqual(shared);
    await hit(storage);
    // The hit was counted in memory (Redis failed it): that count is read back.
    expect(await storage.peek('ratelimit:default:k', 'default')).toEqual({
      hits: 1,
      windowEndsInSeconds: 60,
      blockedForSeconds: 0,
    });
    expect(failed).toHaveBeenCalledWith('timed out');
    storage.onApplicationShutdown();
  });

  it('counts each outage from zero: a blip later in the window does not bring back the last one', async () => {
    jest.spyOn(Logger.prototype, 'log').mockImplementation(() => undefined);
    const answers = jest.fn<Promise<typeof record>, []>();
    const down = () => answers.mockRejectedValue(new Error('Command timed out'));
    const peek = jest.fn().mockRejectedValue(new Error('Command timed out'));
    const storage = storageWith(true, answers, jest.fn(), peek);
    // Outage 1: the key spends its budget of 2 in memory and is refused for the window.
    down();
    await hit(storage);
    await hit(storage);
    expect(await hit(storage)).toMatchObject({ isBlocked: true, timeToBlockExpire: 60 });
    // Still the same outage while Redis fails without answering in between: the block holds.
    expect(await hit(storage)).toMatchObject({ isBlocked: true });
    // Redis answers again (its count, with budget left, is used), then fails once more.
    answers.mockResolvedValueOnce(record);
    await expect(hit(storage)).resolves.toEqual(record);
    down();
    expect(await storage.peek('ratelimit:default:k', 'default')).toEqual({
      hits: 0,
      windowEndsInSeconds: 0,
      blockedForSeconds: 0,
    });
    expect(await hit(storage)).toEqual({
      totalHits: 1,
      timeToExpire: 60,
      isBlocked: false,
      timeToBlockExpire: 0,
    });
    storage.onApplicationShutdown();
  });

  it('does not even try Redis while it is disconnected', async () => {
    const shared = jest.fn();
    const storage = storageWith(false, shared);
    expect((await hit(storage)).totalHits).toBe(1);
    expect(shared).not.toHaveBeenCalled();
    expect(warned).toHaveBeenCalledTimes(1);
    storage.onApplicationShutdown();
  });
});

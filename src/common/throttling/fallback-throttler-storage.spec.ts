import { Logger } from '@nestjs/common';
import { Store, storage as logScope } from 'nestjs-pino/storage';
import { pino } from 'pino';
import { RedisConnection } from '../redis/redis-connection';
import { FallbackThrottlerStorage } from './fallback-throttler-storage';
import { RateLimitHit, RateLimitRecord, RateLimitStorage } from './rate-limit-storage';

/** RedisConnection.failed when the failure rests Redis (not this process' own stall). */
const rests = () => jest.fn(() => true);

function storageWith(
  connected: boolean,
  shared: RateLimitStorage['increment'],
  failed = rests(),
  peek: RateLimitStorage['peek'] = jest.fn(),
) {
  const redis = { ready: () => (connected ? {} : null), failed };
  return new FallbackThrottlerStorage(redis as unknown as RedisConnection, {
    increment: shared,
    peek,
  });
}

/**
 * A storage over a RedisConnection that, as the real one does, rests Redis after a failed
 * command (RedisConnection.failed answers true), or, `late`, finds each failure to be this
 * process' own lateness and keeps using it (answers false). Redis answers `answer(hit)`, or
 * rejects with a timeout once `down` is set.
 */
function storageOver(answer: (hit: RateLimitHit) => Promise<RateLimitRecord>, late = false) {
  const state = { down: false, resting: false };
  const failed = jest.fn(() => {
    if (!late) state.resting = true;
    return !late;
  });
  const redis = { ready: () => (state.resting ? null : {}), failed };
  const shared = jest.fn((hit: RateLimitHit) =>
    state.down ? Promise.reject(new Error('Command timed out')) : answer(hit),
  );
  const storage = new FallbackThrottlerStorage(redis as unknown as RedisConnection, {
    increment: shared,
    peek: jest.fn().mockRejectedValue(new Error('Command timed out')),
  });
  const hitOf = (key: string) =>
    storage.increment({ key, scope: 'default', ttl: HOUR, limit: 10, blockDuration: HOUR });
  return { storage, state, shared, failed, hitOf };
}

const HOUR = 3_600_000;
/** What Redis answers for a key in its hour-long cool-down, and for one at 8 of its 10. */
const blockedInRedis = {
  totalHits: 10,
  timeToExpire: 3600,
  isBlocked: true,
  timeToBlockExpire: 3600,
};
const eightInRedis = { totalHits: 8, timeToExpire: 3600, isBlocked: false, timeToBlockExpire: 0 };

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

  // An on-call audit saw it under a user's request id, 46 s after Redis came back.
  it("says Redis is gone and back as the process's lines, not those of the requests that met it", async () => {
    let connected = false;
    const redis = { ready: () => (connected ? {} : null), failed: rests() };
    const fallback = new FallbackThrottlerStorage(redis as unknown as RedisConnection, {
      increment: jest.fn().mockResolvedValue(record),
      peek: jest.fn(),
    });
    const loggedUnder: unknown[] = [];
    jest.spyOn(Logger.prototype, 'log').mockImplementation(() => {
      loggedUnder.push(logScope.getStore()?.logger.bindings().req ?? 'no request');
    });
    const warnedUnder: unknown[] = [];
    warned.mockImplementation(() => {
      warnedUnder.push(logScope.getStore()?.logger.bindings().req ?? 'no request');
    });
    const request = new Store(pino({ enabled: false }).child({ req: { id: 'unrelated' } }));
    await logScope.run(request, () => hit(fallback));
    connected = true;
    await logScope.run(request, () => hit(fallback));
    expect(warnedUnder).toEqual(['no request']);
    expect(loggedUnder).toEqual(['no request']);
  });

  it('counts in Redis while it answers', async () => {
    const shared = jest.fn().mockResolvedValue(record);
    const storage = storageWith(true, shared);
    await expect(hit(storage)).resolves.toEqual(record);
    expect(shared).toHaveBeenCalledTimes(1);
    expect(warned).not.toHaveBeenCalled();
    storage.onApplicationShutdown();
  });

  it('counts in process memory when a Redis command fails, with the same limit and block', async () => {
    const failed = rests();
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
    const shared = { hits: 1, windowEndsInSeconds: 30, blockedForSeconds: 0 };
    const peek = jest.fn().mockResolvedValueOnce(shared).mockRejectedValue(new Error('timed out'));
    const failed = rests();
    const storage = storageWith(true, jest.fn().mockRejectedValue(new Error('down')), failed, peek);
    await expect(storage.peek('ratelimit:default:k', 'default')).resolves.toEqual(shared);
    await hit(storage);
    // The hit was counted in memory (Redis failed it), on the count Redis last read: read back.
    expect(await storage.peek('ratelimit:default:k', 'default')).toEqual({
      hits: 2,
      windowEndsInSeconds: 30,
      blockedForSeconds: 0,
    });
    expect(failed).toHaveBeenCalledWith('timed out');
    storage.onApplicationShutdown();
  });

  it('drops the counts of an outage once Redis answers: a later blip starts from its answer', async () => {
    jest.spyOn(Logger.prototype, 'log').mockImplementation(() => undefined);
    const answers = jest.fn<Promise<typeof record>, []>();
    const down = () => answers.mockRejectedValue(new Error('Command timed out'));
    const peek = jest.fn().mockRejectedValue(new Error('Command timed out'));
    const storage = storageWith(true, answers, rests(), peek);
    // Outage 1: the key spends its budget of 2 in memory and is refused for the window.
    down();
    await hit(storage);
    await hit(storage);
    expect(await hit(storage)).toMatchObject({ isBlocked: true, timeToBlockExpire: 60 });
    // Still the same outage while Redis fails without answering in between: the block holds.
    expect(await hit(storage)).toMatchObject({ isBlocked: true });
    // Redis answers again (its count, with budget left, is used), then fails once more: the
    // count starts from that answer, the outage's block is gone with the outage.
    const one = { totalHits: 1, timeToExpire: 30, isBlocked: false, timeToBlockExpire: 0 };
    answers.mockResolvedValueOnce(one);
    await expect(hit(storage)).resolves.toEqual(one);
    down();
    expect(await storage.peek('ratelimit:default:k', 'default')).toEqual({
      hits: 1,
      windowEndsInSeconds: 30,
      blockedForSeconds: 0,
    });
    expect(await hit(storage)).toEqual({
      totalHits: 2,
      timeToExpire: 30,
      isBlocked: false,
      timeToBlockExpire: 0,
    });
    storage.onApplicationShutdown();
  });

  // An audit's finding: a flood stalled the event loop past the command timeout, each replica
  // fell back counting from zero, and a key in its hour-long cool-down was admitted 200 times.
  it('falls back from what Redis last said: a blocked key stays blocked, a key at 8 counts on from 8', async () => {
    const { storage, state, shared, hitOf } = storageOver((hit) =>
      Promise.resolve(hit.key === 'blocked' ? blockedInRedis : eightInRedis),
    );
    await hitOf('blocked');
    await hitOf('at-8');
    state.down = true;
    // The hit whose command failed, and those after it (Redis resting, not tried).
    expect(await hitOf('blocked')).toMatchObject({ isBlocked: true, timeToBlockExpire: 3600 });
    expect(await hitOf('blocked')).toMatchObject({ isBlocked: true, timeToBlockExpire: 3600 });
    expect(await storage.peek('blocked', 'default')).toEqual({
      hits: 10,
      windowEndsInSeconds: 3600,
      blockedForSeconds: 3600,
    });
    expect(await hitOf('at-8')).toMatchObject({ totalHits: 9, isBlocked: false });
    expect(await hitOf('at-8')).toMatchObject({ totalHits: 10, isBlocked: false });
    expect(await hitOf('at-8')).toMatchObject({ totalHits: 10, isBlocked: true });
    expect(shared).toHaveBeenCalledTimes(3);
    storage.onApplicationShutdown();
  });

  // An audit's finding: the ends Redis' answers were kept as, and the counts in memory, were
  // wall-clock times, so setting the clock back 6 h stretched an hour's cool-down to 7 h
  // (docs/decisions.md, "Clocks").
  it("keeps Redis' cool-down to its length while counting in memory, though the wall clock is set back", async () => {
    jest.useFakeTimers();
    const { storage, state, hitOf } = storageOver(() => Promise.resolve(blockedInRedis));
    try {
      await hitOf('blocked');
      state.down = true;
      jest.setSystemTime(Date.now() - 6 * HOUR);
      jest.advanceTimersByTime(2_000);
      expect(await hitOf('blocked')).toMatchObject({ isBlocked: true, timeToBlockExpire: 3598 });
      expect(await hitOf('fresh')).toMatchObject({ totalHits: 1, timeToExpire: 3600 });
      jest.setSystemTime(Date.now() - 6 * HOUR);
      expect(await hitOf('fresh')).toMatchObject({ totalHits: 2, timeToExpire: 3600 });
    } finally {
      storage.onApplicationShutdown();
      jest.useRealTimers();
    }
  });

  // Under a flood, commands sent before the first timeout are still answered after it: such an
  // answer is no sign that Redis is used again, and must not drop what the fallback counted.
  it('keeps counting on in memory when a command sent before the fallback is answered late', async () => {
    let late: (record: RateLimitRecord) => void = () => undefined;
    const { storage, state, hitOf } = storageOver((hit) =>
      hit.key === 'slow'
        ? new Promise((resolve) => (late = resolve))
        : Promise.resolve(eightInRedis),
    );
    await hitOf('at-8');
    const slow = hitOf('slow');
    await new Promise((resolve) => setImmediate(resolve));
    state.down = true;
    expect(await hitOf('at-8')).toMatchObject({ totalHits: 9, isBlocked: false });
    late(eightInRedis);
    await slow;
    expect(await hitOf('at-8')).toMatchObject({ totalHits: 10, isBlocked: false });
    expect(await hitOf('at-8')).toMatchObject({ isBlocked: true });
    storage.onApplicationShutdown();
  });

  // A timeout this process' own stall caused (RedisConnection.failed answers false): Redis is
  // still used; the hit whose answer came too late is counted on from Redis' last answer.
  it('answers a hit whose command timed out in a stall from Redis last answer, and keeps using Redis', async () => {
    const { storage, state, shared, failed, hitOf } = storageOver(
      () => Promise.resolve(eightInRedis),
      true,
    );
    await hitOf('at-8');
    state.down = true;
    expect(await hitOf('at-8')).toMatchObject({ totalHits: 9, isBlocked: false });
    expect(await hitOf('at-8')).toMatchObject({ totalHits: 10, isBlocked: false });
    expect(await hitOf('at-8')).toMatchObject({ totalHits: 10, isBlocked: true });
    expect(shared).toHaveBeenCalledTimes(4);
    expect(failed).toHaveBeenCalledTimes(3);
    expect(warned).not.toHaveBeenCalled();
    // Redis' next answer is the count again.
    state.down = false;
    expect(await hitOf('at-8')).toEqual(eightInRedis);
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

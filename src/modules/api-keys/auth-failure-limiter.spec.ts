import { setTimeout as sleep } from 'node:timers/promises';
import { Logger } from '@nestjs/common';
import { MetricsService } from '../../common/metrics/metrics.service';
import { MemoryThrottlerStorage } from '../../common/throttling/memory-throttler-storage';
import type { RateLimitStorage } from '../../common/throttling/rate-limit-storage';
import { AuthFailureLimiter, TooManyAuthFailuresException } from './auth-failure-limiter';
import { testConfig } from '../../../test/support/test-config';

const ADDRESS = '198.51.100.7';
const KEY = `sk_live_${'k'.repeat(43)}`;

function limiter() {
  const storage = new MemoryThrottlerStorage();
  const config = testConfig({ auth: { failureLimit: 2, failureWindowSeconds: 60 } });
  const metrics = { recordRateLimitRejection: () => undefined } as unknown as MetricsService;
  return { limiter: new AuthFailureLimiter(storage, config, metrics), storage };
}

// Each lockout logs a warning, which would fill the run's output: kept quiet in every test (the
// tests of those lines spy on them themselves).
beforeEach(() => jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined));
afterEach(() => jest.restoreAllMocks());

/** Fails three times from ADDRESS, past the limit of 2, the third time locking it out. */
async function lockOut(limiter: AuthFailureLimiter): Promise<void> {
  await limiter.recordFailure(ADDRESS, 'sk_live_wrong-1');
  await limiter.recordFailure(ADDRESS, 'sk_live_wrong-2');
  await expect(limiter.recordFailure(ADDRESS, 'sk_live_wrong-3')).rejects.toBeInstanceOf(
    TooManyAuthFailuresException,
  );
}

/** A shared count that answers a round trip later, as Redis does. */
function slowStorage(): { storage: RateLimitStorage; close: () => void } {
  const memory = new MemoryThrottlerStorage();
  const storage: RateLimitStorage = {
    increment: async (hit) => {
      await sleep(20);
      return memory.increment(hit);
    },
    peek: async (key, scope) => {
      await sleep(20);
      return memory.peek(key, scope);
    },
  };
  return { storage, close: () => memory.onApplicationShutdown() };
}

describe(AuthFailureLimiter.name, () => {
  it('locks an address out at its limit-th failure, before the shared count has answered', async () => {
    const config = testConfig({ auth: { failureLimit: 2, failureWindowSeconds: 60 } });
    const metrics = { recordRateLimitRejection: () => undefined } as unknown as MetricsService;
    const { storage, close } = slowStorage();
    const failures = new AuthFailureLimiter(storage, config, metrics);
    const first = failures.recordFailure(ADDRESS, 'wrong-1');
    expect(() => failures.refuseIfLockedOut(() => ADDRESS, undefined)).not.toThrow();
    const second = failures.recordFailure(ADDRESS, 'wrong-2');
    // Neither increment has come back: the lockout is known all the same.
    expect(() => failures.refuseIfLockedOut(() => ADDRESS, undefined)).toThrow(
      TooManyAuthFailuresException,
    );
    await expect(failures.recordFailure(ADDRESS, 'wrong-3')).rejects.toBeInstanceOf(
      TooManyAuthFailuresException,
    );
    await Promise.all([first, second]);
    close();
  });

  it('has the master key wait for the lookups in flight that could reach the limit, counting their failures', async () => {
    const { limiter: failures, storage } = limiter();
    // Two guesses in flight (the limit): the master key waits for their verdicts.
    const guesses = [1, 2].map((n) => {
      let settle!: () => void;
      const looked = new Promise<void>((resolve) => (settle = resolve));
      const verdict = looked.then(() => failures.recordFailure(ADDRESS, `wrong-${n}`));
      return { settle, done: failures.lookingUp(ADDRESS, verdict) };
    });
    let answered = false;
    const master = failures.refuseMasterBeyondLimit(ADDRESS).finally(() => (answered = true));
    await sleep(20);
    expect(answered).toBe(false);
    // Another address is not held up.
    await expect(failures.refuseMasterBeyondLimit('203.0.113.9')).resolves.toBeUndefined();
    guesses.forEach((guess) => guess.settle());
    await Promise.allSettled(guesses.map((guess) => guess.done));
    await expect(master).rejects.toBeInstanceOf(TooManyAuthFailuresException);
    storage.onApplicationShutdown();
  });

  // A busy client's (or a NAT's) valid keys looked up at once had counted as guesses, and the
  // operator was refused under load (found by a soak test).
  it('admits the master key once the lookups in flight turn out valid keys', async () => {
    const { limiter: failures, storage } = limiter();
    const valid = [1, 2, 3].map(() =>
      failures.lookingUp(
        ADDRESS,
        sleep(10).then(() => true),
      ),
    );
    await expect(failures.refuseMasterBeyondLimit(ADDRESS)).resolves.toBeUndefined();
    await Promise.all(valid);
    storage.onApplicationShutdown();
  });

  it('refuses the master key at an address whose failures another replica counted', async () => {
    const config = testConfig({ auth: { failureLimit: 2, failureWindowSeconds: 60 } });
    const metrics = { recordRateLimitRejection: () => undefined } as unknown as MetricsService;
    const { storage, close } = slowStorage();
    const here = new AuthFailureLimiter(storage, config, metrics);
    const elsewhere = new AuthFailureLimiter(storage, config, metrics);
    await elsewhere.recordFailure(ADDRESS, 'wrong-1');
    await expect(here.refuseMasterBeyondLimit(ADDRESS)).resolves.toBeUndefined();
    // The limit-th failure, answered 401 there: the address is locked out from then on.
    await elsewhere.recordFailure(ADDRESS, 'wrong-2');
    const refused = await here.refuseMasterBeyondLimit(ADDRESS).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(TooManyAuthFailuresException);
    // What is left of the 60 s window: well above a few seconds, whatever a loaded machine's
    // stalls took from it (> 58 had left it under 2 s).
    expect((refused as TooManyAuthFailuresException).retryAfterSeconds).toBeGreaterThan(50);
    // Remembered here: the address's next requests are refused before any lookup.
    expect(() => here.refuseIfLockedOut(() => ADDRESS, undefined)).toThrow(
      TooManyAuthFailuresException,
    );
    await expect(here.refuseMasterBeyondLimit('203.0.113.9')).resolves.toBeUndefined();
    close();
  });

  it('lets an address in again at the instant its lockout ends, not a second later', async () => {
    const start = 1_000_000;
    const now = jest.spyOn(performance, 'now').mockReturnValue(start);
    const { limiter: failures, storage } = limiter();
    try {
      // The limit-th failure (2) locks the address out for the window, 60 s.
      await failures.recordFailure(ADDRESS, 'sk_live_wrong-1');
      await failures.recordFailure(ADDRESS, 'sk_live_wrong-2');
      now.mockReturnValue(start + 59_999);
      expect(() => failures.refuseIfLockedOut(() => ADDRESS, undefined)).toThrow(
        expect.objectContaining({ retryAfterSeconds: 1 }),
      );
      // Not a 429 saying to come back in 0 seconds.
      now.mockReturnValue(start + 60_000);
      expect(() => failures.refuseIfLockedOut(() => ADDRESS, undefined)).not.toThrow();
    } finally {
      now.mockRestore();
      storage.onApplicationShutdown();
    }
  });

  // A failure after the limit-th (a lookup that was in flight) is refused without starting a
  // later lockout: the lockout and its Retry-After run from the limit-th (a mutation audit's
  // finding: no test held that).
  it('keeps a lockout to a window from its limit-th failure, whatever failures follow', async () => {
    jest.useFakeTimers();
    const { limiter: failures, storage } = limiter();
    try {
      await failures.recordFailure(ADDRESS, 'sk_live_wrong-1');
      await failures.recordFailure(ADDRESS, 'sk_live_wrong-2');
      jest.advanceTimersByTime(30_000);
      await expect(failures.recordFailure(ADDRESS, 'sk_live_wrong-3')).rejects.toBeInstanceOf(
        TooManyAuthFailuresException,
      );
      jest.advanceTimersByTime(30_000);
      expect(() => failures.refuseIfLockedOut(() => ADDRESS, undefined)).not.toThrow();
    } finally {
      storage.onApplicationShutdown();
      jest.useRealTimers();
    }
  });

  it('lets a key admitted before through its address’s lockout, and no other key', async () => {
    const { limiter: failures, storage } = limiter();
    failures.recordAdmission('key-1', KEY);
    await lockOut(failures);

    expect(() => failures.refuseIfLockedOut(() => ADDRESS, KEY)).not.toThrow();
    expect(() => failures.refuseIfLockedOut(() => ADDRESS, `${KEY}x`)).toThrow(
      TooManyAuthFailuresException,
    );
    expect(() => failures.refuseIfLockedOut(() => ADDRESS, undefined)).toThrow(
      TooManyAuthFailuresException,
    );
    storage.onApplicationShutdown();
  });

  it('forgets an admitted key that fails later (deactivated since)', async () => {
    const { limiter: failures, storage } = limiter();
    failures.recordAdmission('key-1', KEY);
    await failures.recordFailure(ADDRESS, KEY);
    await failures.recordFailure(ADDRESS, 'sk_live_wrong-1');
    await expect(failures.recordFailure(ADDRESS, 'sk_live_wrong-2')).rejects.toBeInstanceOf(
      TooManyAuthFailuresException,
    );

    expect(() => failures.refuseIfLockedOut(() => ADDRESS, KEY)).toThrow(
      TooManyAuthFailuresException,
    );
    storage.onApplicationShutdown();
  });

  // ApiKeysService hashed the key once already: a key known by its id is not hashed again at
  // each of its requests (it was, on the hot path). Seen here as the second call, whose key is
  // never hashed, changing nothing.
  it('records a key once by its id, not again at each of its requests', async () => {
    const { limiter: failures, storage } = limiter();
    failures.recordAdmission('key-1', KEY);
    failures.recordAdmission('key-1', `${KEY}-not-hashed`);
    await lockOut(failures);

    expect(() => failures.refuseIfLockedOut(() => ADDRESS, KEY)).not.toThrow();
    expect(() => failures.refuseIfLockedOut(() => ADDRESS, `${KEY}-not-hashed`)).toThrow(
      TooManyAuthFailuresException,
    );
    storage.onApplicationShutdown();
  });
});

describe(`${AuthFailureLimiter.name}: lockouts counted elsewhere, windows, metrics`, () => {
  const config = testConfig({ auth: { failureLimit: 2, failureWindowSeconds: 60 } });

  // Another replica counted the address's other failures: this replica learns of the lockout
  // at the address's failure here, and must keep refusing it before any lookup from then on.
  it('remembers a lockout the shared count reports, for a full window from the refused failure', async () => {
    let now = Date.parse('2026-11-20T12:00:00.000Z');
    const clock = jest.spyOn(Date, 'now').mockImplementation(() => now);
    const storage = new MemoryThrottlerStorage(() => now);
    const metrics = { recordRateLimitRejection: () => undefined } as unknown as MetricsService;
    const here = new AuthFailureLimiter(storage, config, metrics);
    const elsewhere = new AuthFailureLimiter(storage, config, metrics);
    try {
      await elsewhere.recordFailure(ADDRESS, 'sk_live_wrong-1');
      await elsewhere.recordFailure(ADDRESS, 'sk_live_wrong-2');
      now += 50_000;
      const refused = await here
        .recordFailure(ADDRESS, 'sk_live_wrong-3')
        .catch((error: unknown) => error);
      // The cool-down is the window again, not what was left of the first failure's (10 s).
      expect(refused).toEqual(expect.objectContaining({ retryAfterSeconds: 60 }));
      expect(() => here.refuseIfLockedOut(() => ADDRESS, undefined)).toThrow(
        TooManyAuthFailuresException,
      );
    } finally {
      clock.mockRestore();
      storage.onApplicationShutdown();
    }
  });

  // A shared count that says "blocked" with nothing left of the cool-down (Redis rounds a last
  // few milliseconds to 0) must not answer "come back in 0 seconds".
  it('asks to come back in at least one second', async () => {
    const storage = {
      increment: async () => ({
        totalHits: 2,
        timeToExpire: 0,
        isBlocked: true,
        timeToBlockExpire: 0,
      }),
    } as unknown as RateLimitStorage;
    const metrics = { recordRateLimitRejection: () => undefined } as unknown as MetricsService;
    const failures = new AuthFailureLimiter(storage, config, metrics);
    await expect(failures.recordFailure(ADDRESS, 'sk_live_wrong-1')).rejects.toEqual(
      expect.objectContaining({ retryAfterSeconds: 1 }),
    );
  });

  // Redis answering slowly: the failures this process saw already reach the limit, and the
  // master key is refused without waiting for the shared count to catch up.
  it('refuses the master key at the limit counted here while the shared count lags behind', async () => {
    const storage: RateLimitStorage = {
      increment: () => new Promise(() => undefined),
      peek: async () => ({ hits: 0, windowEndsInSeconds: 0, blockedForSeconds: 0 }),
    };
    const metrics = { recordRateLimitRejection: () => undefined } as unknown as MetricsService;
    const failures = new AuthFailureLimiter(storage, config, metrics);
    void failures.recordFailure(ADDRESS, 'sk_live_wrong-1');
    void failures.recordFailure(ADDRESS, 'sk_live_wrong-2');
    await expect(failures.refuseMasterBeyondLimit(ADDRESS)).rejects.toBeInstanceOf(
      TooManyAuthFailuresException,
    );
  });

  // The window starts at an address's first failure and does not slide with the later ones:
  // failures spread wider than the window never lock a client out, and a lockout ends.
  it('forgets failures once the window from the first of them has passed', async () => {
    const oneSecond = testConfig({ auth: { failureLimit: 2, failureWindowSeconds: 1 } });
    const storage = new MemoryThrottlerStorage();
    const metrics = { recordRateLimitRejection: () => undefined } as unknown as MetricsService;
    const failures = new AuthFailureLimiter(storage, oneSecond, metrics);
    try {
      // Proves something only if the second failure came within the first one's window, and the
      // third within a second of the second (else a sliding window would have ended too): a
      // loaded machine can stall past either between the 600 ms waits. Such an attempt is made
      // again, from another address.
      let third: unknown = 'no attempt in time';
      for (let attempt = 0; attempt < 5; attempt++) {
        const address = `198.51.100.${10 + attempt}`;
        const first = performance.now();
        await failures.recordFailure(address, 'sk_live_wrong-1');
        await sleep(600);
        const second = performance.now();
        await failures.recordFailure(address, 'sk_live_wrong-2');
        const secondDone = performance.now();
        await sleep(600);
        const outcome = await failures
          .recordFailure(address, 'sk_live_wrong-3')
          .catch((error: unknown) => error);
        // Milliseconds of slack for the limiter's clocks.
        if (secondDone - first < 990 && performance.now() - second < 990) {
          third = outcome;
          break;
        }
      }
      expect(third).toBeUndefined();
    } finally {
      storage.onApplicationShutdown();
    }
  });

  // An audit's finding: a lockout was kept until a wall-clock time, so setting the clock back
  // 6 h locked the address out for 6 h more (docs/decisions.md, "Clocks").
  it('keeps a lockout to its length, though the wall clock is set back', async () => {
    jest.useFakeTimers();
    const { limiter: failures, storage } = limiter();
    try {
      await lockOut(failures);
      jest.setSystemTime(Date.now() - 6 * 3_600_000);
      jest.advanceTimersByTime(30_000);
      const refusal = (() => {
        try {
          failures.refuseIfLockedOut(() => ADDRESS, undefined);
        } catch (error) {
          return error as TooManyAuthFailuresException;
        }
        return undefined;
      })();
      expect(refusal?.retryAfterSeconds).toBe(30);
      jest.advanceTimersByTime(30_000);
      expect(() => failures.refuseIfLockedOut(() => ADDRESS, undefined)).not.toThrow();
    } finally {
      storage.onApplicationShutdown();
      jest.useRealTimers();
    }
  });

  it('counts every lockout refusal as an unauthenticated rate-limit rejection', async () => {
    const storage = new MemoryThrottlerStorage();
    const recordRateLimitRejection = jest.fn();
    const metrics = { recordRateLimitRejection } as unknown as MetricsService;
    const failures = new AuthFailureLimiter(storage, config, metrics);
    await lockOut(failures);
    expect(() => failures.refuseIfLockedOut(() => ADDRESS, undefined)).toThrow(
      TooManyAuthFailuresException,
    );
    expect(recordRateLimitRejection.mock.calls).toEqual([['unauthenticated'], ['unauthenticated']]);
    storage.onApplicationShutdown();
  });

  describe('its lockout lines', () => {
    const metrics = { recordRateLimitRejection: () => undefined } as unknown as MetricsService;
    let warn: jest.SpiedFunction<Logger['warn']>;
    let storage: MemoryThrottlerStorage;
    beforeEach(() => {
      warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
      storage = new MemoryThrottlerStorage();
    });
    afterEach(() => {
      warn.mockRestore();
      storage.onApplicationShutdown();
    });

    it('logs one warning per lockout, naming the address and its limit, and nothing of the keys', async () => {
      const failures = new AuthFailureLimiter(storage, config, metrics);
      await lockOut(failures);
      expect(() => failures.refuseIfLockedOut(() => ADDRESS, undefined)).toThrow(
        TooManyAuthFailuresException,
      );
      await expect(failures.recordFailure(ADDRESS, 'sk_live_wrong-4')).rejects.toBeInstanceOf(
        TooManyAuthFailuresException,
      );
      expect(warn.mock.calls).toEqual([
        [
          `${ADDRESS} locked out for 60 s: 2 failed authentications within 60 s (AUTH_FAILURE_LIMIT)`,
        ],
      ]);
    });

    it('logs a lockout another replica counted once this process learns of it', async () => {
      const here = new AuthFailureLimiter(storage, config, metrics);
      const elsewhere = new AuthFailureLimiter(storage, config, metrics);
      await elsewhere.recordFailure(ADDRESS, 'sk_live_wrong-1');
      await elsewhere.recordFailure(ADDRESS, 'sk_live_wrong-2');
      warn.mockClear();
      for (const guess of ['sk_live_wrong-3', 'sk_live_wrong-4'])
        await expect(here.recordFailure(ADDRESS, guess)).rejects.toBeInstanceOf(
          TooManyAuthFailuresException,
        );
      expect(warn).toHaveBeenCalledTimes(1);
      expect(warn.mock.calls[0][0]).toMatch(new RegExp(`^${ADDRESS} locked out for \\d+ s`));
    });
  });

  // Every address that was ever looked up had left an empty entry behind: a map growing with
  // each new client for as long as the process ran. Seen only in the limiter's own state.
  it('forgets an address once its lookups have settled', async () => {
    const storage = new MemoryThrottlerStorage();
    const metrics = { recordRateLimitRejection: () => undefined } as unknown as MetricsService;
    const failures = new AuthFailureLimiter(storage, config, metrics);
    await failures.lookingUp(
      ADDRESS,
      sleep(1).then(() => true),
    );
    await Promise.resolve();
    expect((failures as unknown as { lookups: Map<string, unknown> }).lookups.size).toBe(0);
    storage.onApplicationShutdown();
  });
});

// One machine has a /64 of 2^64 addresses: counted per address, each guess from a new one was
// answered 401 and none added to a lockout (an audit's finding).
describe(`${AuthFailureLimiter.name}: an IPv6 client counts by its /64`, () => {
  const config = testConfig({ auth: { failureLimit: 2, failureWindowSeconds: 60 } });
  const metrics = { recordRateLimitRejection: () => undefined } as unknown as MetricsService;

  it('locks out a /64 whose addresses each failed once, the master key included', async () => {
    const storage = new MemoryThrottlerStorage();
    const failures = new AuthFailureLimiter(storage, config, metrics);
    await failures.recordFailure('2001:db8:1:2::1', 'sk_live_wrong-1');
    await failures.recordFailure('2001:db8:1:2::2', 'sk_live_wrong-2');
    await expect(
      failures.recordFailure('2001:db8:1:2::3', 'sk_live_wrong-3'),
    ).rejects.toBeInstanceOf(TooManyAuthFailuresException);
    expect(() => failures.refuseIfLockedOut(() => '2001:db8:1:2:ffff::9', undefined)).toThrow(
      TooManyAuthFailuresException,
    );
    await expect(failures.refuseMasterBeyondLimit('2001:db8:1:2::abcd:1')).rejects.toBeInstanceOf(
      TooManyAuthFailuresException,
    );
    // The next /64 is another client.
    expect(() => failures.refuseIfLockedOut(() => '2001:db8:1:3::1', undefined)).not.toThrow();
    await expect(failures.refuseMasterBeyondLimit('2001:db8:1:3::1')).resolves.toBeUndefined();
    storage.onApplicationShutdown();
  });

  it('shares the count of a /64 across replicas', async () => {
    const { storage, close } = slowStorage();
    const here = new AuthFailureLimiter(storage, config, metrics);
    const elsewhere = new AuthFailureLimiter(storage, config, metrics);
    await elsewhere.recordFailure('2001:db8:1:2::1', 'sk_live_wrong-1');
    await elsewhere.recordFailure('2001:db8:1:2::2', 'sk_live_wrong-2');
    await expect(here.refuseMasterBeyondLimit('2001:db8:1:2::abcd:1')).rejects.toBeInstanceOf(
      TooManyAuthFailuresException,
    );
    close();
  });

  it('has the master key wait for the guesses of other addresses of its /64 in flight', async () => {
    const storage = new MemoryThrottlerStorage();
    const failures = new AuthFailureLimiter(storage, config, metrics);
    const guesses = [1, 2].map((n) =>
      failures.lookingUp(
        `2001:db8:1:2::${n}`,
        sleep(10).then(() => failures.recordFailure(`2001:db8:1:2::${n}`, `wrong-${n}`)),
      ),
    );
    await expect(failures.refuseMasterBeyondLimit('2001:db8:1:2::abcd:1')).rejects.toBeInstanceOf(
      TooManyAuthFailuresException,
    );
    await Promise.allSettled(guesses);
    storage.onApplicationShutdown();
  });

  it('counts an IPv4-mapped address with its IPv4 address', async () => {
    const storage = new MemoryThrottlerStorage();
    const failures = new AuthFailureLimiter(storage, config, metrics);
    await failures.recordFailure(ADDRESS, 'sk_live_wrong-1');
    await failures.recordFailure(`::ffff:${ADDRESS}`, 'sk_live_wrong-2');
    expect(() => failures.refuseIfLockedOut(() => ADDRESS, undefined)).toThrow(
      TooManyAuthFailuresException,
    );
    // IPv4 stays per address.
    expect(() => failures.refuseIfLockedOut(() => '198.51.100.8', undefined)).not.toThrow();
    storage.onApplicationShutdown();
  });
});

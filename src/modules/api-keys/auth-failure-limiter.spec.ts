import { AppConfig } from '../../config/app-config';
import { MetricsService } from '../../common/metrics/metrics.service';
import { MemoryThrottlerStorage } from '../../common/throttling/memory-throttler-storage';
import { AuthFailureLimiter, TooManyAuthFailuresException } from './auth-failure-limiter';

const ADDRESS = '198.51.100.7';
const KEY = `sk_live_${'k'.repeat(43)}`;

function limiter() {
  const storage = new MemoryThrottlerStorage();
  const config = { auth: { failureLimit: 2, failureWindowSeconds: 60 } } as AppConfig;
  const metrics = { recordRateLimitRejection: () => undefined } as unknown as MetricsService;
  return { limiter: new AuthFailureLimiter(storage, config, metrics), storage };
}

/** Fails three times from ADDRESS, past the limit of 2, the third time locking it out. */
async function lockOut(limiter: AuthFailureLimiter): Promise<void> {
  await limiter.recordFailure(ADDRESS, 'sk_live_wrong-1');
  await limiter.recordFailure(ADDRESS, 'sk_live_wrong-2');
  await expect(limiter.recordFailure(ADDRESS, 'sk_live_wrong-3')).rejects.toBeInstanceOf(
    TooManyAuthFailuresException,
  );
}

describe(AuthFailureLimiter.name, () => {
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

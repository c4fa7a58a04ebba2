import { ExecutionContext, HttpException } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { ApiKeyPrincipal } from '../auth/api-key-principal';
import type { MetricsService } from '../metrics/metrics.service';
import { RateLimitGuard } from './rate-limit.guard';
import type { RateLimitHit, RateLimitRecord, RateLimitStorage } from './rate-limit-storage';

const SETTINGS = { regularPerWindow: 100, validatorPerWindow: 1000, windowSeconds: 60 };

class AnyController {
  handle(): void {}
}

/** The guard over a storage that answers `record`, run for `apiKey`; what it did. */
async function guard(apiKey: ApiKeyPrincipal | undefined, record: RateLimitRecord) {
  const hits: RateLimitHit[] = [];
  const storage = {
    increment: (hit: RateLimitHit) => (hits.push(hit), Promise.resolve(record)),
  } as unknown as RateLimitStorage;
  const rejections: string[] = [];
  const metrics = {
    recordRateLimitRejection: (keyClass: string) => rejections.push(keyClass),
  } as unknown as MetricsService;
  const headers = new Map<string, unknown>();
  const response = { setHeader: (name: string, value: unknown) => headers.set(name, value) };
  const context = {
    switchToHttp: () => ({ getRequest: () => ({ apiKey }), getResponse: () => response }),
    getClass: () => AnyController,
    getHandler: () => AnyController.prototype.handle,
  } as unknown as ExecutionContext;
  const rateLimit = new RateLimitGuard(storage, SETTINGS, new Reflector(), metrics);
  const outcome = await Promise.resolve(rateLimit.canActivate(context)).catch(
    (error: unknown) => error,
  );
  return { outcome, hits, headers, rejections };
}

const REGULAR: ApiKeyPrincipal = { id: 'k1', tier: 'regular', isMaster: false, rateLimit: null };

describe(RateLimitGuard.name, () => {
  it('counts nothing for a request without a key (the public routes)', async () => {
    const { outcome, hits } = await guard(undefined, {
      totalHits: 0,
      timeToExpire: 0,
      isBlocked: false,
      timeToBlockExpire: 0,
    });
    expect(outcome).toBe(true);
    expect(hits).toEqual([]);
  });

  it("counts against the key's own budget, over its class's, with a cool-down of one window", async () => {
    const { outcome, hits } = await guard(
      { ...REGULAR, tier: 'validator', rateLimit: 7 },
      { totalHits: 1, timeToExpire: 60, isBlocked: false, timeToBlockExpire: 0 },
    );
    expect(outcome).toBe(true);
    expect(hits).toEqual([
      {
        key: 'ratelimit:default:k1',
        scope: 'default',
        ttl: 60_000,
        limit: 7,
        blockDuration: 60_000,
      },
    ]);
  });

  it('tells a refused client to wait at least a second, even at the last moment of its cool-down', async () => {
    // A storage can report 0 s left as the cool-down ends (a TTL read at its expiry):
    // `Retry-After: 0` would have the client retry at once, into another 429.
    const { outcome, headers, rejections } = await guard(REGULAR, {
      totalHits: 100,
      timeToExpire: 0,
      isBlocked: true,
      timeToBlockExpire: 0,
    });
    expect(outcome).toBeInstanceOf(HttpException);
    expect((outcome as HttpException).getStatus()).toBe(429);
    expect((outcome as HttpException).getResponse()).toEqual({ detail: 'Rate limit exceeded' });
    expect(headers.get('Retry-After')).toBe(1);
    expect(rejections).toEqual(['regular']);
  });
});

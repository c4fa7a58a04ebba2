import { ConflictException, Logger, NotFoundException } from '@nestjs/common';
import { LRUCache } from 'lru-cache';
import { Clock } from '../../common/clock/clock';
import { isRecord } from '../../common/is-record';
import { isDatabaseUnavailable } from '../../common/database-unavailable';
import { ApiKeyEntity } from './api-key.entity';
import { ApiKeyUsageRecorder } from './api-key-usage.recorder';
import { hashApiKey } from '../../common/security/api-key-secret';
import { ApiKeysRepository } from './api-keys.repository';
import { ApiKeysService, KEY_LOOKUP_PATIENCE_MS } from './api-keys.service';
import { KeyChanges } from './key-changes';
import { MemoryThrottlerStorage } from '../../common/throttling/memory-throttler-storage';
import { RateLimitSettings } from '../../common/throttling/rate-limit-settings';
import { KEY_BUDGET_SCOPE, keyBudgetCounter } from '../../common/throttling/key-budget';
import { testConfig } from '../../../test/support/test-config';

const BUDGETS: RateLimitSettings = {
  regularPerWindow: 100,
  validatorPerWindow: 1000,
  windowSeconds: 3600,
};
const KEY = 'sk_live_unit-test-key-0000000000000000000000000000';
const ID = '3a49b7bb-48be-448d-915e-760ac904253e';

function setUp(
  stored: Partial<ApiKeyEntity> = {},
  { keyCacheTtlMs = 60_000, connectTimeoutMs = 5000 } = {},
) {
  const key: ApiKeyEntity = {
    id: ID,
    name: 'team',
    keyHash: hashApiKey(KEY),
    prefix: KEY.slice(0, 12),
    tier: 'regular',
    isActive: true,
    createdAt: new Date('2026-11-01T00:00:00Z'),
    lastUsedAt: null,
    deactivatedAt: null,
    expiresAt: null,
    rateLimit: null,
    ...stored,
  };
  const repository = {
    findByHash: jest.fn(async (hash: string) => (hash === key.keyHash ? { ...key } : null)),
    findById: jest.fn(async (id: string) => (id === key.id ? { ...key } : null)),
    updateActive: jest.fn(),
    deactivate: jest.fn(),
  };
  let announced: (keyId: string) => void = () => undefined;
  const changes = {
    onChanged: (listener: (keyId: string) => void) => (announced = listener),
    publish: jest.fn(),
  };
  const usage = { record: jest.fn(), settled: jest.fn() };
  const clock = new Clock();
  const budgets = new MemoryThrottlerStorage();
  const config = testConfig({
    masterKey: 'sk_master_unit_0123456789',
    auth: { keyCacheTtlMs },
    database: { connectTimeoutMs },
  });
  const service = new ApiKeysService(
    repository as unknown as ApiKeysRepository,
    usage as unknown as ApiKeyUsageRecorder,
    changes as unknown as KeyChanges,
    clock,
    budgets,
    BUDGETS,
    config,
  );
  return {
    service,
    repository,
    changes,
    clock,
    key,
    budgets,
    announce: (id: string) => announced(id),
  };
}

/**
 * Holds the next lookup by hash until the returned function is called, then answers what it read
 * when it began: the key as it was then (null for any other hash), as a query racing a change does.
 */
function holdNextLookup({ repository, key }: ReturnType<typeof setUp>): () => void {
  let answer: () => void = () => undefined;
  repository.findByHash.mockImplementationOnce(
    (hash: string) =>
      new Promise((resolve) => {
        const read = hash === key.keyHash ? { ...key } : null;
        answer = () => resolve(read);
      }),
  );
  return () => answer();
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The time `work` took to settle, and how: its value, or its error. */
async function timed<T>(work: Promise<T>): Promise<{ ms: number; value?: T; error?: unknown }> {
  const start = performance.now();
  try {
    const value = await work;
    return { ms: performance.now() - start, value };
  } catch (error) {
    return { ms: performance.now() - start, error };
  }
}

describe(ApiKeysService.name, () => {
  // The key audit's lines (key-audit.spec.ts reads them) would fill the run's output.
  beforeEach(() => jest.spyOn(Logger.prototype, 'log').mockImplementation(() => undefined));
  afterEach(() => jest.restoreAllMocks());

  describe('a lookup the database does not answer (a frozen Postgres)', () => {
    const hang = () => new Promise<never>(() => undefined);

    it('answers a key read before as last read once its patience is spent, not never', async () => {
      const setup = setUp({}, { keyCacheTtlMs: 10, connectTimeoutMs: 3000 });
      const { service, repository } = setup;
      expect(await service.authenticate(KEY)).toMatchObject({ id: ID });
      await sleep(20); // past the cache's TTL: the next request looks the key up
      repository.findByHash.mockImplementation(hang);
      const polls = await Promise.all([
        timed(Promise.resolve(service.authenticate(KEY))),
        timed(Promise.resolve(service.authenticate(KEY))),
      ]);
      for (const poll of polls) {
        expect(poll.value).toMatchObject({ id: ID });
        expect(poll.ms).toBeGreaterThanOrEqual(KEY_LOOKUP_PATIENCE_MS - 20);
        expect(poll.ms).toBeLessThan(2000);
      }
      // The first read, then one shared lookup.
      expect(repository.findByHash).toHaveBeenCalledTimes(2);
    });

    it('answers a key read before as last read at once when the lookup fails for the database', async () => {
      const { service, repository } = setUp({}, { keyCacheTtlMs: 10 });
      await service.authenticate(KEY);
      await sleep(20);
      repository.findByHash.mockRejectedValue(
        Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }),
      );
      const poll = await timed(Promise.resolve(service.authenticate(KEY)));
      expect(poll.value).toMatchObject({ id: ID });
      expect(poll.ms).toBeLessThan(KEY_LOOKUP_PATIENCE_MS);
    });

    it('bounds the wait for a key never read with a 503, and trusts no last read of a key changed since', async () => {
      const setup = setUp({}, { keyCacheTtlMs: 10, connectTimeoutMs: 700 });
      const { service, repository } = setup;
      await service.authenticate(KEY);
      setup.announce(ID); // another replica changed it: its last read is no longer the key
      repository.findByHash.mockImplementation(hang);
      for (const presented of [KEY, 'sk_live_never-read-0000000000000000000000000000000']) {
        const poll = await timed(Promise.resolve(service.authenticate(presented)));
        expect(isDatabaseUnavailable(poll.error)).toBe(true);
        expect(poll.ms).toBeGreaterThanOrEqual(680);
        expect(poll.ms).toBeLessThan(2000);
      }
    });
  });

  it('refuses a cached key as expired from the instant of its expiry, not from the next lookup', async () => {
    // Time stands still but for `advance`: 1 ms before the expiry, and at it, exactly.
    const now = Date.parse('2026-11-20T12:00:00.000Z');
    const frozen = jest.spyOn(Date, 'now').mockReturnValue(now);
    try {
      const { service, repository, clock } = setUp({ expiresAt: new Date(now + 5000) });
      expect(await service.authenticate(KEY)).toMatchObject({ id: ID, rateLimit: null });
      clock.advance(4999);
      expect(await service.authenticate(KEY)).toMatchObject({ id: ID });
      clock.advance(1);
      expect(await service.authenticate(KEY)).toEqual({
        refused: 'expired',
        id: expect.any(String),
      });
      expect(repository.findByHash).toHaveBeenCalledTimes(1);
    } finally {
      frozen.mockRestore();
    }
  });

  it('answers the master key and a cached key at once; looks up the others through a promise', async () => {
    const { service, repository } = setUp();
    expect(service.authenticate('sk_master_unit_0123456789')).toMatchObject({ isMaster: true });
    const first = service.authenticate(KEY);
    expect(first).toBeInstanceOf(Promise);
    expect(await first).toMatchObject({ id: ID });
    expect(service.authenticate(KEY)).toMatchObject({ id: ID });
    expect(await service.authenticate(`${KEY}x`)).toBeNull();
    expect(repository.findByHash).toHaveBeenCalledTimes(2);
  });

  // Refused alike (401 "Invalid API key"), but told apart for the request's line and the counter.
  it('answers a deactivated key as deactivated, apart from an unknown one', async () => {
    const { service } = setUp({ isActive: false, expiresAt: new Date('2026-01-01T00:00:00Z') });
    expect(await service.authenticate(KEY)).toEqual({
      refused: 'deactivated',
      id: expect.any(String),
    });
    expect(await service.authenticate(`${KEY}x`)).toBeNull();
  });

  it("carries the key's own limit to the principal", async () => {
    const { service } = setUp({ rateLimit: 42 });
    expect(await service.authenticate(KEY)).toMatchObject({ rateLimit: 42 });
  });

  it('drops a cached key when another replica announces a change to it', async () => {
    const { service, repository, announce } = setUp();
    await service.authenticate(KEY);
    await service.authenticate(KEY);
    expect(repository.findByHash).toHaveBeenCalledTimes(1);
    announce(ID);
    await service.authenticate(KEY);
    expect(repository.findByHash).toHaveBeenCalledTimes(2);
  });

  // Every change, made here or announced, scanned both caches whole on every replica: some 3.3 ms
  // of blocked event loop at 10,000 cached keys, each time (an audit's finding).
  it('drops a changed key among many cached by its id, without going through the caches', async () => {
    const unit = setUp();
    const { service, repository, announce } = unit;
    const keys = Array.from({ length: 1000 }, (_, n) => ({
      presented: `sk_live_many-${String(n).padStart(39, '0')}`,
      id: `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`,
    }));
    const idByHash = new Map(keys.map(({ presented, id }) => [hashApiKey(presented), id]));
    repository.findByHash.mockImplementation(async (hash: string) => {
      const id = idByHash.get(hash);
      return id === undefined ? null : { ...unit.key, id, keyHash: hash };
    });
    for (const { presented } of keys) await service.authenticate(presented);
    repository.findByHash.mockClear();

    const walks = (
      [
        'entries',
        'keys',
        'values',
        'rentries',
        'rkeys',
        'rvalues',
        'forEach',
        'rforEach',
        'find',
        'dump',
      ] as const
    ).map((method) => jest.spyOn(LRUCache.prototype, method));
    const iterator = jest.spyOn(LRUCache.prototype, Symbol.iterator);
    try {
      announce(keys[500].id);
      for (const walk of [...walks, iterator]) expect(walk).not.toHaveBeenCalled();
    } finally {
      [...walks, iterator].forEach((walk) => walk.mockRestore());
    }

    // Its neighbours are still answered from the cache, at once; the changed key is read again.
    for (const n of [0, 499, 501, 999])
      expect(service.authenticate(keys[n].presented)).toMatchObject({ id: keys[n].id });
    await expect(service.authenticate(keys[500].presented)).resolves.toMatchObject({
      id: keys[500].id,
    });
    expect(repository.findByHash.mock.calls).toEqual([[hashApiKey(keys[500].presented)]]);
  });

  it('answers a lookup racing a change made here with the changed key, and does not cache the old one', async () => {
    const unit = setUp();
    const { service, key } = unit;
    // The lookup reads the key as it was before the deactivation, and answers after it.
    const answerOldRow = holdNextLookup(unit);
    const racing = service.authenticate(KEY);
    key.isActive = false;
    await service.deactivate(ID, 'master');
    answerOldRow();
    await expect(racing).resolves.toEqual({ refused: 'deactivated', id: expect.any(String) });
    expect(await service.authenticate(KEY)).toEqual({
      refused: 'deactivated',
      id: expect.any(String),
    });
  });

  it('does not cache the old row of a lookup in flight when another replica announces a change', async () => {
    const unit = setUp();
    const { service, key, announce } = unit;
    // The lookup reads the key as it was before the deactivation, and answers after it.
    const answerOldRow = holdNextLookup(unit);
    const racing = service.authenticate(KEY);
    key.isActive = false; // deactivated through another replica, which announces it
    announce(ID);
    answerOldRow();
    await expect(racing).resolves.toEqual({ refused: 'deactivated', id: expect.any(String) });
    expect(await service.authenticate(KEY)).toEqual({
      refused: 'deactivated',
      id: expect.any(String),
    });
  });

  it('answers an unknown key as unknown, not with an error, when a change is announced during its lookup', async () => {
    // lru-cache's fetch rejected with "deleted" here (the guard's 500, no failure counted).
    const unit = setUp();
    const { service, repository, announce } = unit;
    const answerNothing = holdNextLookup(unit);
    const racing = service.authenticate(`${KEY}x`);
    announce(ID);
    answerNothing();
    await expect(racing).resolves.toBeNull();
    expect(repository.findByHash).toHaveBeenCalledTimes(2); // read again after the change
  });

  it('shares one query between concurrent lookups of a key, and caches its answer', async () => {
    const unit = setUp();
    const { service, repository } = unit;
    const answer = holdNextLookup(unit);
    const both = Promise.all([service.authenticate(KEY), service.authenticate(KEY)]);
    answer();
    expect(await both).toMatchObject([{ id: ID }, { id: ID }]);
    expect(service.authenticate(KEY)).toMatchObject({ id: ID });
    expect(repository.findByHash).toHaveBeenCalledTimes(1);
  });

  it('answers 404 without a query for an id that only begins like a UUID', async () => {
    // Postgres refuses such a text as a uuid: looked up, it would be a 500, not the 404 of any
    // other id.
    const { service, repository } = setUp();
    for (const id of [`${ID}x`, `${ID}/more`, ` ${ID}`]) {
      await expect(service.deactivate(id, 'master')).rejects.toBeInstanceOf(NotFoundException);
      await expect(service.update(id, { name: 'x' }, 'master')).rejects.toBeInstanceOf(
        NotFoundException,
      );
      await expect(service.get(id)).rejects.toBeInstanceOf(NotFoundException);
    }
    expect(repository.findById).not.toHaveBeenCalled();
  });

  it('answers 409 when a deactivation wins the race with an update, and announces nothing', async () => {
    const { service, repository, changes } = setUp();
    repository.updateActive.mockResolvedValue(null);
    await expect(service.update(ID, { rate_limit: 5 }, 'master')).rejects.toBeInstanceOf(
      ConflictException,
    );
    expect(changes.publish).not.toHaveBeenCalled();
  });

  it('passes only the fields given, with null for those cleared, and announces the change', async () => {
    const { service, repository, changes, key } = setUp({ rateLimit: 10 });
    repository.updateActive.mockResolvedValue({ before: key, after: { ...key, rateLimit: null } });
    const updated = await service.update(ID, { rate_limit: null }, 'master');
    expect(repository.updateActive).toHaveBeenCalledWith(
      ID,
      { name: undefined, expiresAt: undefined, rateLimit: null },
      expect.any(Function),
    );
    expect(updated.rate_limit).toBeNull();
    expect(changes.publish).toHaveBeenCalledWith(ID);
  });

  it("shows a key's budget as counted where the rate-limit guard counts it, without counting", async () => {
    const { service, budgets } = setUp();
    const hit = { key: keyBudgetCounter(ID), scope: KEY_BUDGET_SCOPE, limit: 100 };
    for (let i = 0; i < 3; i++)
      await budgets.increment({ ...hit, ttl: 3_600_000, blockDuration: 3_600_000 });
    const first = await service.get(ID);
    expect(first.usage).toEqual({
      limit: 100,
      window_seconds: 3600,
      used: 3,
      remaining: 97,
      resets_in_seconds: 3600,
      rate_limited: false,
    });
    expect((await service.get(ID)).usage.used).toBe(3);
  });

  it("counts a key against its own limit, else its class's", async () => {
    expect((await setUp({ rateLimit: 7 }).service.get(ID)).usage.limit).toBe(7);
    expect((await setUp({ tier: 'validator' }).service.get(ID)).usage.limit).toBe(1000);
    const fresh = await setUp().service.get(ID);
    expect(fresh.usage).toMatchObject({
      limit: 100,
      used: 0,
      remaining: 100,
      resets_in_seconds: 0,
    });
  });

  it('audits what the change changed, from the row it locked, not from an older read', async () => {
    // Read first as `team`; renamed by another change before this one locked the row.
    const { service, repository, key } = setUp({ rateLimit: 10 });
    const renamed = { ...key, name: 'renamed elsewhere' };
    repository.updateActive.mockResolvedValue({
      before: renamed,
      after: { ...renamed, rateLimit: 41 },
    });
    const logged = jest.spyOn(Logger.prototype, 'log').mockImplementation(() => undefined);
    await service.update(ID, { rate_limit: 41 }, 'master');
    const [fields] = logged.mock.calls.find(
      ([line]) => isRecord(line) && line.audit === 'key_updated',
    )!;
    expect((fields as { changes: unknown }).changes).toEqual({ rate_limit: { from: 10, to: 41 } });
  });
});

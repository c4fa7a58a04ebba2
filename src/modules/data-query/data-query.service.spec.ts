import { getMetadataStorage } from 'class-validator';
import { Clock } from '../../common/clock/clock';
import { MetricsService } from '../../common/metrics/metrics.service';
import { RedisConnection } from '../../common/redis/redis-connection';
import { ResponseCache } from '../../common/redis/response-cache';
import { NetworkService } from '../../network/network.service';
import { NetworkQuery } from '../../network/protocol';
import { emptyResult, NetworkQueryResult } from '../../network/query-result';
import { DataQueryService } from './data-query.service';
import { DataQueryRequestDto } from './dto/data-query-request.dto';
import { testConfig } from '../../../test/support/test-config';

const NOW = new Date('2026-11-20T12:00:00Z');

/** A live answer of three miners asked, two of them answering, none with items. */
const ANSWERED: NetworkQueryResult = {
  ...emptyResult('unused'),
  error: undefined,
  minersQueried: 3,
  minersResponded: 2,
  minersEmpty: 2,
  minersPassedChecks: 2,
};

function setUp(results: NetworkQueryResult[] = [ANSWERED]) {
  const queries: NetworkQuery[] = [];
  const network = {
    query: (query: NetworkQuery) => {
      queries.push(query);
      return Promise.resolve(results[Math.min(queries.length - 1, results.length - 1)]);
    },
  } as unknown as NetworkService;
  // No Redis: the cache is the process memory, as without REDIS_URL.
  const cache = new ResponseCache({ ready: () => undefined } as unknown as RedisConnection);
  const config = testConfig({ network: { queryCacheTtlSeconds: 60 } });
  const metrics = { recordOnDemandAnswer: () => undefined } as unknown as MetricsService;
  const service = new DataQueryService(
    network,
    cache,
    { now: () => NOW } as Clock,
    config,
    metrics,
  );
  return { service, queries, network };
}

/**
 * A network whose queries wait until `answer()`, then answer ANSWERED, or fail with `failure`:
 * queries sent meanwhile are in flight together.
 */
function setUpHeld(failure?: Error) {
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  const { service, queries, network } = setUp();
  network.query = (query: NetworkQuery) => {
    queries.push(query);
    return held.then(() => {
      if (failure) throw failure;
      return ANSWERED;
    });
  };
  return { service, queries, answer: () => release() };
}

/** Resolves once `done()` holds, checking after each turn of the event loop. */
async function until(done: () => boolean): Promise<void> {
  while (!done()) await new Promise((resolve) => setImmediate(resolve));
}

describe(DataQueryService.name, () => {
  it('asks for 100 items when the request gives no limit, as the hosted API', async () => {
    const { service, queries } = setUp();
    await service.query({ source: 'x' });
    await service.query({ source: 'reddit', limit: null });
    expect(queries.map((query) => query.limit)).toEqual([100, 100]);
  });

  it('ends a query without end_date now, on the service clock', async () => {
    const { service, queries } = setUp();
    await service.query({ source: 'x', start_date: '2026-11-19' });
    expect(queries[0]).toMatchObject({ startDate: new Date('2026-11-19T00:00:00Z'), endDate: NOW });
  });

  // Cut to its millisecond, the start let in items of that millisecond, before it (an audit).
  it('asks from the millisecond after a start_date written past its millisecond', async () => {
    const { service, queries } = setUp();
    await service.query({ source: 'x', start_date: '2026-11-19T10:00:00.0000001Z' });
    expect(queries[0]).toMatchObject({ startDate: new Date('2026-11-19T10:00:00.001Z') });
  });

  // A start after the end is refused by validation (data-query-request.dto.spec.ts).
  it('takes a start_date equal to end_date', async () => {
    const { service } = setUp();
    const same: DataQueryRequestDto = {
      source: 'x',
      start_date: '2026-11-19T10:00:00Z',
      end_date: '2026-11-19T10:00:00Z',
    };
    await expect(service.query(same)).resolves.toMatchObject({ status: 'success' });
  });

  it('serves a query differing only in the order and case of usernames and keywords from the cache', async () => {
    const { service, queries } = setUp();
    await service.query({ source: 'x', usernames: ['Alice', 'bob'], keywords: ['#AI', 'gm'] });
    const second = await service.query({
      source: 'x',
      usernames: ['@BOB', 'alice'],
      keywords: ['gm', '#ai'],
    });
    expect(queries).toHaveLength(1);
    expect(second.meta.cache_hit).toBe(true);
  });

  // A combining accent (NFD) spells the composed word (a Unicode audit): one cache entry, and the
  // network (the plan, the matcher, miners) asked the composed keyword (a review's finding).
  it('asks the network composed keywords, and serves a decomposed spelling from the same entry', async () => {
    const { service, queries } = setUp();
    await service.query({ source: 'x', keywords: ['cafe\u0301'] });
    const second = await service.query({ source: 'x', keywords: ['caf\u00e9'] });
    expect(queries).toHaveLength(1);
    expect(queries[0].keywords).toEqual(['caf\u00e9']);
    expect(second.meta.cache_hit).toBe(true);
  });

  // Each of N identical queries arriving together missed the cache and fanned out, spending the
  // miners' hourly calls (shared with the validator on the hotkey) N times (a review's finding).
  it('joins an identical query in flight: one network query, the joiner answered as a cache hit', async () => {
    const { service, queries, answer } = setUpHeld();
    const first = service.query({ source: 'x', usernames: ['Alice'], keywords: ['#AI'] });
    const joined = service.query({ source: 'x', usernames: ['@alice'], keywords: ['#ai'] });
    const other = service.query({ source: 'x', keywords: ['#ai'] });
    await until(() => queries.length >= 2);
    answer();
    const [asked, shared] = await Promise.all([first, joined, other]);
    expect(queries).toHaveLength(2);
    expect(asked.meta.cache_hit).toBe(false);
    expect(shared).toMatchObject({
      status: 'success',
      meta: { cache_hit: true, miners_queried: 3 },
    });
  });

  it('shares a failure of a query in flight with its joiners, and caches nothing of it', async () => {
    const { service, queries, answer } = setUpHeld(new Error('database down'));
    const first = service.query({ source: 'x', keywords: ['#ai'] });
    const joined = service.query({ source: 'x', keywords: ['#ai'] });
    await until(() => queries.length >= 1);
    answer();
    await expect(first).rejects.toThrow('database down');
    await expect(joined).rejects.toThrow('database down');
    expect(queries).toHaveLength(1);
    await expect(service.query({ source: 'x', keywords: ['#ai'] })).rejects.toThrow();
    expect(queries).toHaveLength(2);
  });

  // Each field of the request, set to a value other than its default. A field added to the
  // request fails the first expectation until it has one here.
  const OTHER_VALUES: Record<keyof DataQueryRequestDto, unknown> = {
    source: 'reddit',
    usernames: ['someone'],
    keywords: ['bitcoin'],
    keyword_mode: 'any',
    start_date: '2026-11-19',
    end_date: '2026-11-20',
    limit: 7,
  };

  it('keeps queries that differ in any one field of the request apart in the cache', async () => {
    const fields = getMetadataStorage()
      .getTargetValidationMetadatas(DataQueryRequestDto, '', true, false)
      .map((metadata) => metadata.propertyName);
    expect(Object.keys(OTHER_VALUES).sort()).toEqual([...new Set(fields)].sort());
    for (const [field, value] of Object.entries(OTHER_VALUES)) {
      const { service, queries } = setUp();
      await service.query({ source: 'x' });
      const other = await service.query({ source: 'x', [field]: value });
      expect({ field, cacheHit: other.meta.cache_hit, asked: queries.length }).toEqual({
        field,
        cacheHit: false,
        asked: 2,
      });
    }
  });

  it('keeps queries that differ only in limit apart in the cache', async () => {
    // A cached answer cut at 7 items must not answer a query for 100.
    const { service, queries } = setUp();
    await service.query({ source: 'reddit', keywords: ['r/bitcoin'], limit: 7 });
    const other = await service.query({ source: 'reddit', keywords: ['r/bitcoin'] });
    expect(queries).toHaveLength(2);
    expect(other.meta.cache_hit).toBe(false);
  });

  it('does not cache an error: the next identical query asks the network again', async () => {
    // "No miners available" is passing; caching it would repeat it for the whole TTL.
    const { service, queries } = setUp([emptyResult('No miners available'), ANSWERED]);
    const failed = await service.query({ source: 'x', keywords: ['#ai'] });
    const retried = await service.query({ source: 'x', keywords: ['#ai'] });
    expect(failed.status).toBe('error');
    expect(queries).toHaveLength(2);
    expect(retried).toMatchObject({ status: 'success', meta: { cache_hit: false } });
  });

  // Its fetches go on and store their items for the next query (docs/decisions.md, "On-demand
  // from stored data"); cached, the next identical query got the cut answer again for the whole
  // TTL (an audit's finding).
  it('does not cache a stored answer the deadline cut, and caches a whole one', async () => {
    const stored = (deadlineReached: boolean): NetworkQueryResult => ({
      ...ANSWERED,
      origin: 'stored',
      deadlineReached,
      stored: {
        coverage: 'complete',
        buckets: { planned: 3, fromStore: 1, fetchedNow: 0, missing: deadlineReached ? 2 : 0 },
        oldestFetchedAt: null,
      },
    });
    const { service, queries } = setUp([stored(true), stored(false)]);
    const cut = await service.query({ source: 'x', keywords: ['#ai'] });
    const fuller = await service.query({ source: 'x', keywords: ['#ai'] });
    const repeated = await service.query({ source: 'x', keywords: ['#ai'] });
    expect(queries).toHaveLength(2);
    expect(cut.meta).toMatchObject({ deadline_reached: true, cache_hit: false });
    expect(fuller.meta).toMatchObject({ deadline_reached: false, cache_hit: false });
    expect(repeated.meta).toMatchObject({ deadline_reached: false, cache_hit: true });
  });

  it("reports a stored answer's bucket counts each under its own name, and the live origin without them", async () => {
    const { service } = setUp([
      {
        ...ANSWERED,
        origin: 'stored',
        stored: {
          coverage: 'complete',
          buckets: { planned: 9, fromStore: 4, fetchedNow: 3, missing: 2 },
          oldestFetchedAt: new Date('2026-11-20T11:00:00Z'),
        },
      },
      ANSWERED,
    ]);
    const stored = await service.query({ source: 'x', keywords: ['#ai'] });
    expect(stored.meta).toMatchObject({ origin: 'stored' });
    expect(stored.meta.stored).toEqual({
      coverage: 'complete',
      buckets_planned: 9,
      buckets_from_store: 4,
      buckets_fetched_now: 3,
      buckets_missing: 2,
      oldest_data_fetched_at: '2026-11-20T11:00:00.000Z',
    });
    const live = await service.query({ source: 'reddit' });
    expect(live.meta.origin).toBe('live');
    expect(live.meta.stored).toBeUndefined();
  });

  // Hours the answer needed were neither stored nor fetched in time: "no data" was said of hours
  // never read, which the hosted API's clients take for "nothing exists".
  it('says no_data_available only of a stored answer that searched every hour it needed', async () => {
    const storedEmpty = (coverage: 'complete' | 'partial', missing: number) => ({
      ...ANSWERED,
      origin: 'stored' as const,
      stored: {
        coverage,
        buckets: { planned: 4, fromStore: 2, fetchedNow: 2 - missing, missing },
        oldestFetchedAt: null,
      },
    });
    const { service } = setUp([storedEmpty('partial', 2), storedEmpty('complete', 0)]);
    const missing = await service.query({ source: 'x', keywords: ['#ai'], usernames: ['bob'] });
    expect(missing).toMatchObject({ status: 'success', data: [] });
    expect(missing.meta.no_data_available).toBe(false);
    const searched = await service.query({ source: 'x', keywords: ['#ai'], usernames: ['eve'] });
    expect(searched).toMatchObject({ status: 'success', data: [] });
    expect(searched.meta.no_data_available).toBe(true);
  });

  it('counts as non-responsive every miner asked that did not answer, failed or still silent', async () => {
    // At quorum a straggler has not failed (yet), but it did not respond either.
    const { service } = setUp([
      { ...ANSWERED, minersQueried: 4, minersFailed: { count: 1, reasons: { http_error: 1 } } },
    ]);
    const response = await service.query({ source: 'x' });
    expect(response.meta).toMatchObject({
      miners_queried: 4,
      miners_responded: 2,
      non_responsive_miners: 2,
      miners_failed: { count: 1, reasons: { http_error: 1 } },
    });
  });

  // "Every queried miner failed" while the miners that answer were out of budget: the count of
  // those left out tells it from every miner failing (an on-call audit's finding).
  it('says how many miners were left out for want of budget, apart from the failed ones', async () => {
    const { service } = setUp([
      {
        ...emptyResult('Every queried miner failed'),
        minersQueried: 2,
        minersFailed: { count: 2, reasons: { timeout: 2 } },
        minersWithoutBudget: 3,
      },
    ]);
    const response = await service.query({ source: 'x' });
    expect(response.meta).toMatchObject({
      miners_queried: 2,
      miners_failed: { count: 2, reasons: { timeout: 2 } },
      miners_without_budget: 3,
    });
  });
});

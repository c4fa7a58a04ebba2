import { Clock } from '../../../common/clock/clock';
import { pythonIsoDate } from '../../../common/python-json';
import { MetricsService } from '../../../common/metrics/metrics.service';
import { RedisConnection } from '../../../common/redis/redis-connection';
import { ResponseCache } from '../../../common/redis/response-cache';
import { NetworkService } from '../../../network/network.service';
import { emptyResult, NetworkQueryResult } from '../../../network/query-result';
import { xPostTime } from '../../../network/x-post-id';
import { DataQueryService } from '../data-query.service';
import { QUERY_RESPONSE_EXAMPLES } from './data-query.examples';
import { XItemDto } from './x-item.dto';
import { testConfig } from '../../../../test/support/test-config';

/** What the service answers for `result`, as the examples stand for. */
async function answerTo(result: NetworkQueryResult) {
  const network = { query: () => Promise.resolve(result) } as unknown as NetworkService;
  const service = new DataQueryService(
    network,
    new ResponseCache({ ready: () => undefined } as unknown as RedisConnection),
    { now: () => new Date('2026-11-24T10:00:00Z') } as Clock,
    testConfig({ network: { queryCacheTtlSeconds: 0 } }),
    { recordOnDemandAnswer: () => undefined } as unknown as MetricsService,
  );
  return service.query({ source: 'x' });
}

// The gateway drops an X post dated away from the minute its id holds: the documented example
// must be an item it would answer with.
describe('the documented on-demand answers', () => {
  const examples = Object.entries(QUERY_RESPONSE_EXAMPLES);
  const xItems = examples
    .flatMap(([, example]) => (example.value as { data?: unknown[] }).data ?? [])
    .filter((item): item is XItemDto => (item as { source?: string }).source === 'X');

  it('hold an X post whose id holds its time, to the minute', () => {
    expect(xItems.length).toBeGreaterThan(0);
    for (const item of xItems) {
      const posted = xPostTime(item.tweet.id);
      expect(posted).toBeDefined();
      expect(Math.floor(posted!.getTime() / 60_000)).toBe(
        Math.floor(Date.parse(item.datetime) / 60_000),
      );
      expect(item.uri.endsWith(`/status/${item.tweet.id}`)).toBe(true);
    }
  });

  // The examples had `meta.error` last (the service sends it first), and a consensus of 1 beside
  // no items (the service answers 0).
  it('list meta in the order the service answers it, its error first', async () => {
    const stored = await answerTo({
      ...emptyResult('unused'),
      error: undefined,
      origin: 'stored',
      stored: {
        coverage: 'complete',
        buckets: { planned: 1, fromStore: 1, fetchedNow: 0, missing: 0 },
        oldestFetchedAt: null,
      },
    });
    const failed = await answerTo(emptyResult('No miners available'));
    const order = [...new Set([...Object.keys(failed.meta), ...Object.keys(stored.meta)])];
    for (const [name, example] of examples) {
      const keys = Object.keys(example.value.meta);
      expect({ name, keys }).toEqual({ name, keys: order.filter((key) => keys.includes(key)) });
    }
  });

  it('answer a consensus of 0 with no items, as the service does', () => {
    for (const [name, example] of examples) {
      if (example.value.data.length > 0) continue;
      expect({ name, consensus: example.value.meta.consensus }).toEqual({ name, consensus: 0 });
    }
  });

  // A stored X record keeps its minute only, but its id holds the second, which a stored answer
  // gives as a live one does (README, "Item times").
  it('date a stored answer’s X items to the second their ids hold', () => {
    const stored = examples.filter(([, example]) => example.value.meta.origin === 'stored');
    expect(stored.length).toBeGreaterThan(0);
    for (const [, example] of stored)
      for (const item of example.value.data as XItemDto[])
        expect(item.datetime).toBe(pythonIsoDate(xPostTime(item.tweet.id)!));
  });
});

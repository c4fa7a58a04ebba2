import {
  CompressedMinerIndex,
  DataItem,
  GetDataEntityBucketResponse,
  MinerEndpoint,
  OnDemandMinerRequest,
  OnDemandMinerResponse,
} from '../network/protocol';
import { compileQuery } from '../network/query-matcher';
import { Devnet, startDevnet } from './devnet';
import { MinerServer } from './miner-server';

const now = new Date('2024-06-01T00:00:00Z');
const FAULTY = 2;
const SIXTEEN_MB = 16 * 1024 * 1024;

function call(
  url: string,
  endpoint: MinerEndpoint,
  body: unknown,
  timeoutMs = 5000,
): Promise<Response> {
  return fetch(`${url}/${endpoint}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-validator-hotkey': '5Validator' },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(timeoutMs),
  });
}

function query(overrides: Partial<OnDemandMinerRequest> = {}): OnDemandMinerRequest {
  return {
    source: 'X',
    usernames: [],
    keywords: [],
    start_date: null,
    end_date: null,
    limit: 1000,
    ...overrides,
  };
}

/** Just enough of a schema check to tell a well-formed X item from a broken one. */
function isWellFormedX(value: unknown): boolean {
  const item = value as Partial<Record<keyof DataItem | 'user' | 'tweet', unknown>>;
  const user = item.user as { username?: unknown } | undefined;
  const tweet = item.tweet as { hashtags?: unknown } | undefined;
  return (
    typeof item.uri === 'string' &&
    typeof item.datetime === 'string' &&
    item.source === 'X' &&
    typeof item.content === 'string' &&
    typeof user?.username === 'string' &&
    Array.isArray(tweet?.hashtags)
  );
}

describe(MinerServer.name, () => {
  let devnet: Devnet;
  let url: string;
  let corpusUris: Set<string>;
  let honestIndex: CompressedMinerIndex;

  const onDemand = async (request: OnDemandMinerRequest): Promise<DataItem[]> => {
    const response = await call(url, 'OnDemandRequest', request);
    expect(response.status).toBe(200);
    return ((await response.json()) as OnDemandMinerResponse).data;
  };

  const minerIndex = async (): Promise<CompressedMinerIndex> =>
    (await (await call(url, 'GetMinerIndex', {})).json()) as CompressedMinerIndex;

  const firstBucket = () => {
    const entry = honestIndex.sources['2']?.find((candidate) => candidate.label === '#bitcoin');
    if (!entry) throw new Error('no #bitcoin bucket');
    return {
      time_bucket_id: entry.time_bucket_ids[entry.time_bucket_ids.length - 1],
      source: 2,
      label: '#bitcoin',
    };
  };

  beforeAll(async () => {
    devnet = await startDevnet({ miners: 3, seed: 5, now, corpusSize: { x: 900, reddit: 600 } });
    url = devnet.miners[FAULTY].url;
    corpusUris = new Set(devnet.corpus.items.map((item) => item.uri));
    honestIndex = await minerIndex();
  });

  afterEach(() => devnet.setBehaviour(FAULTY, {}));

  afterAll(async () => {
    await devnet?.stop();
  });

  it('hangs without answering', async () => {
    devnet.setBehaviour(FAULTY, { hang: true });
    const started = Date.now();
    const error: unknown = await call(url, 'OnDemandRequest', query(), 300).then(
      () => new Error('answered'),
      (failure: unknown) => failure,
    );
    expect((error as Error).name).toBe('TimeoutError');
    expect(Date.now() - started).toBeGreaterThanOrEqual(250);
  });

  it('answers 500', async () => {
    devnet.setBehaviour(FAULTY, { http500: true });
    const response = await call(url, 'GetMinerIndex', {});
    expect(response.status).toBe(500);
    expect(await response.json()).toHaveProperty('error');
  });

  it('answers 200 with a body that is not JSON', async () => {
    devnet.setBehaviour(FAULTY, { malformedJson: true });
    for (const [endpoint, body] of [
      ['OnDemandRequest', query()],
      ['GetMinerIndex', {}],
    ] as const) {
      const response = await call(url, endpoint, body);
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toBe('application/json');
      const text = await response.text();
      expect(text.length).toBeGreaterThan(0);
      expect(() => JSON.parse(text) as unknown).toThrow();
    }
  });

  it('streams a valid-looking body beyond 16 MB', async () => {
    devnet.setBehaviour(FAULTY, { oversize: true });
    for (const [endpoint, body] of [
      ['OnDemandRequest', query({ limit: 1 })],
      ['GetMinerIndex', {}],
      ['GetDataEntityBucket', { bucket_id: firstBucket() }],
    ] as const) {
      const response = await call(url, endpoint, body, 10_000);
      expect(response.status).toBe(200);
      const text = await response.text();
      expect(Buffer.byteLength(text)).toBeGreaterThan(SIXTEEN_MB);
      expect(() => JSON.parse(text) as unknown).not.toThrow();
    }
  });

  it('sends items with missing or wrong-typed fields', async () => {
    const honest = await onDemand(query({ keywords: ['#crypto'] }));
    devnet.setBehaviour(FAULTY, { wrongSchema: true });
    const broken = await onDemand(query({ keywords: ['#crypto'] }));
    expect(honest.every(isWellFormedX)).toBe(true);
    expect(broken).toHaveLength(honest.length);
    expect(broken.some(isWellFormedX)).toBe(false);

    const index = (await minerIndex()) as unknown as { sources: Record<string, unknown[]> };
    expect(index.sources['2']).toContainEqual(expect.objectContaining({ label: 42 }));
    const response = await call(url, 'GetDataEntityBucket', { bucket_id: firstBucket() });
    const { data_entities: entities } = (await response.json()) as { data_entities: unknown[] };
    const sizeTypes = entities.map(
      (entity) => typeof (entity as Record<string, unknown>).content_size_bytes,
    );
    expect(sizeTypes).toContain('string');
  });

  it('fabricates items that break the query, under made-up uris', async () => {
    devnet.setBehaviour(FAULTY, { fabricate: true });
    const author = devnet.corpus.holdingsOf(FAULTY).find((item) => item.source === 'X');
    const requests = [
      query({ keywords: ['#bitcoin', 'halving'] }),
      query({ usernames: [author?.source === 'X' ? author.user.username : 'x'], limit: 20 }),
      query({ start_date: '2024-05-20', end_date: '2024-05-21', keywords: ['bitcoin'] }),
      query({ source: 'REDDIT', keywords: ['/bitcoin'], limit: 10 }),
      query({ source: 'REDDIT', usernames: ['anyone'], start_date: '2024-05-25T00:00:00' }),
    ];
    for (const request of requests) {
      const items = await onDemand(request);
      const matcher = compileQuery(request);
      expect(items.length).toBeGreaterThan(0);
      expect(items.length).toBeLessThanOrEqual(request.limit);
      for (const item of items) {
        expect(matcher.matches(item)).toBe(false);
        expect(corpusUris.has(item.uri)).toBe(false);
      }
    }
    // Nothing to break in an open query: the items are dated in the future instead.
    for (const item of await onDemand(query({ limit: 5 }))) {
      expect(corpusUris.has(item.uri)).toBe(false);
      expect(Date.parse(item.datetime)).toBeGreaterThan(now.getTime());
    }
  });

  it('fabricates index entries and bucket entities', async () => {
    devnet.setBehaviour(FAULTY, { fabricate: true });
    const index = await minerIndex();
    expect(index.sources['2']?.map((entry) => entry.label)).toContain('#fabricated_data');
    const response = await call(url, 'GetDataEntityBucket', { bucket_id: firstBucket() });
    const { data_entities: entities } = (await response.json()) as GetDataEntityBucketResponse;
    expect(entities.some((entity) => !corpusUris.has(entity.uri))).toBe(true);
  });

  it('returns only about half of its matching items', async () => {
    const honest = await onDemand(query());
    devnet.setBehaviour(FAULTY, { partial: true });
    const partial = await onDemand(query());
    const honestUris = new Set(honest.map((item) => item.uri));
    expect(partial.every((item) => honestUris.has(item.uri))).toBe(true);
    expect(partial.length).toBeGreaterThan(honest.length * 0.3);
    expect(partial.length).toBeLessThan(honest.length * 0.7);
  });

  it('overclaims index sizes but keeps entity sizes honest', async () => {
    devnet.setBehaviour(FAULTY, { overclaimSizes: 3 });
    const index = await minerIndex();
    const honestSizes = honestIndex.sources['2']?.flatMap((entry) => entry.sizes_bytes) ?? [];
    const claimed = index.sources['2']?.flatMap((entry) => entry.sizes_bytes) ?? [];
    expect(claimed).toEqual(honestSizes.map((size) => size * 3));
    const response = await call(url, 'GetDataEntityBucket', { bucket_id: firstBucket() });
    const { data_entities: entities } = (await response.json()) as GetDataEntityBucketResponse;
    for (const entity of entities) {
      expect(entity.content_size_bytes).toBe(Buffer.byteLength(JSON.stringify(entity.content)));
    }
  });

  it('applies faults only to the chosen endpoints', async () => {
    devnet.setBehaviour(FAULTY, { http500: true, endpoints: ['GetMinerIndex'] });
    expect((await call(url, 'GetMinerIndex', {})).status).toBe(500);
    expect((await call(url, 'OnDemandRequest', query())).status).toBe(200);
  });

  it('delays answers by the configured latency', async () => {
    devnet.setBehaviour(FAULTY, { latencyMs: { min: 150, max: 200 } });
    const started = Date.now();
    expect((await call(url, 'GetMinerIndex', {})).status).toBe(200);
    expect(Date.now() - started).toBeGreaterThanOrEqual(145);
  });

  it('refuses bad requests before any fault applies', async () => {
    devnet.setBehaviour(FAULTY, { hang: true, latencyMs: 10_000 });
    const response = await call(url, 'OnDemandRequest', query({ limit: 0 }), 2000);
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({ error: 'limit must be a positive integer' });
  });

  it('refuses an invalid behaviour', () => {
    expect(() => devnet.setBehaviour(FAULTY, { faultRate: 2 })).toThrow();
    expect(() => devnet.setBehaviour(7, {})).toThrow();
  });

  it('applies faults at the configured rate, the same way for the same seed', async () => {
    const statuses = async (): Promise<number[]> => {
      const other = await startDevnet({
        miners: [{ behaviour: { http500: true, faultRate: 0.5 } }],
        seed: 5,
        now,
        corpusSize: { x: 20, reddit: 20 },
      });
      try {
        const results: number[] = [];
        for (let index = 0; index < 30; index++) {
          results.push((await call(other.miners[0].url, 'GetMinerIndex', {})).status);
        }
        return results;
      } finally {
        await other.stop();
      }
    };
    const first = await statuses();
    expect(first.filter((status) => status === 500).length).toBeGreaterThan(5);
    expect(first.filter((status) => status === 200).length).toBeGreaterThan(5);
    expect(await statuses()).toEqual(first);
  });
});

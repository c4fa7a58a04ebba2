import { setTimeout as sleep } from 'node:timers/promises';
import Redis from 'ioredis';
import type { Response } from 'supertest';
import { createKey } from '../support/fixtures';
import { startTestApp, TestApp, testRedisPrefix, testRedisUrl } from '../support/test-app';

async function burst(apps: TestApp[], key: string, count: number): Promise<number[]> {
  const requests = Array.from({ length: count }, (_, index) =>
    apps[index % apps.length].http.get('/api/v1/health').set('X-API-Key', key),
  );
  return (await Promise.all(requests)).map((response) => response.status);
}

const count = (statuses: number[], status: number) => statuses.filter((s) => s === status).length;

/**
 * The audit's client, on 3 s windows: 3 requests per window, spent across the windows' seam;
 * refused, it waits out the Retry-After it is told, and must then be admitted with its whole
 * budget. It was refused again, with a new full Retry-After: the requests refused during the
 * cool-down had been counted into a window started then, which outlived the cool-down. `apps`
 * serve the requests in turn.
 */
async function obeyRetryAfter(apps: TestApp[]): Promise<void> {
  let story: RetryAfterStory | undefined;
  for (let attempt = 0; story === undefined && attempt < 5; attempt++)
    story = await tellRetryAfterStory(apps);
  expect(story).toBeDefined();
  const { spent, refused, admitted } = story!;
  const statuses = (responses: Response[]) => responses.map((response) => response.status);
  expect(statuses(spent)).toEqual([200, 200, 200, 429]);
  expect(spent[3].headers['retry-after']).toBe('3');
  expect(statuses(refused)).toEqual([429, 429, 429]);
  expect(Number(refused[2].headers['retry-after'])).toBeLessThanOrEqual(2);
  // A new window, with the whole budget.
  expect(
    admitted.map((response) => [response.status, response.headers['x-ratelimit-remaining']]),
  ).toEqual([
    [200, '2'],
    [200, '1'],
    [200, '0'],
  ]);
}

interface RetryAfterStory {
  /** One request, three in the window's last 1.2 s: the third of those refused. */
  spent: Response[];
  /** Three requests once the first window is over and the cool-down is not. */
  refused: Response[];
  /** Three requests after the Retry-After the last refused one told. */
  admitted: Response[];
}

/**
 * One telling of the story, under a key of its own. Undefined when the machine stalled past a
 * seam the story needs (the refusal within the first window, the refused requests within the
 * cool-down, the admitted ones within one window): such a telling shows nothing either way, and
 * is made again.
 */
async function tellRetryAfterStory(apps: TestApp[]): Promise<RetryAfterStory | undefined> {
  const { key } = await createKey(apps[0], { rate_limit: 3 });
  let turn = 0;
  const send = () => apps[turn++ % apps.length].http.get('/api/v1/health').set('X-API-Key', key);
  const start = Date.now();
  const elapsed = () => Date.now() - start;
  const at = (ms: number) => sleep(Math.max(0, ms - elapsed()));
  // The first window starts with this request, and ends by firstDone + 3000.
  const spent = [await send()];
  const firstDone = elapsed();
  await at(1800);
  spent.push(await send(), await send());
  // The cool-down starts with the refusal, not before this.
  const refusalSent = elapsed();
  spent.push(await send());
  if (elapsed() >= 3000) return undefined;
  await at(firstDone + 3000 + 100);
  const refused = [await send(), await send(), await send()];
  if (elapsed() >= refusalSent + 3000) return undefined;
  await sleep(Number(refused[2].headers['retry-after'] ?? 0) * 1000 + 100);
  const admittedSent = elapsed();
  const admitted = [await send(), await send(), await send()];
  if (elapsed() - admittedSent >= 3000) return undefined;
  return { spent, refused, admitted };
}

describe('Rate limits (in-memory storage)', () => {
  let app: TestApp;

  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(() => app.close());

  it('carries the rate-limit headers and counts each request exactly once', async () => {
    const { key } = await createKey(app);
    for (let expected = 99; expected >= 95; expected--) {
      const response = await app.http.get('/api/v1/health').set('X-API-Key', key).expect(200);
      expect(response.headers['x-ratelimit-limit']).toBe('100');
      expect(response.headers['x-ratelimit-remaining']).toBe(String(expected));
      expect(Number(response.headers['x-ratelimit-reset'])).toBeGreaterThan(3500);
      expect(response.headers['ratelimit-policy']).toBe('"default";q=100;w=3600');
      expect(response.headers['ratelimit']).toBe(
        `"default";r=${expected};t=${response.headers['x-ratelimit-reset']}`,
      );
    }
  });

  it('counts requests that fail validation or privilege checks too', async () => {
    const { key } = await createKey(app);
    await app.http
      .post('/api/v1/on_demand_data_request')
      .set('X-API-Key', key)
      .send({})
      .expect(422);
    const forbidden = await app.http
      .get('/api/v1/monitoring/system-status')
      .set('X-API-Key', key)
      .expect(403);
    expect(forbidden.headers['x-ratelimit-remaining']).toBe('98');
  });

  it('neither counts nor answers with the rate-limit headers what is refused before the key is checked', async () => {
    const { key } = await createKey(app);
    const post = () => app.http.post('/api/v1/on_demand_data_request').set('X-API-Key', key);
    const refused = [
      await app.http
        .get(`/api/v1/get_bytes_by_label?label=${key}`)
        .set('X-API-Key', key)
        .expect(400),
      await post()
        .send({ source: 'x', keywords: ['k'.repeat(2 * 1024 * 1024)] })
        .expect(413),
      await post().set('Content-Type', 'application/json; charset=utf-16').send('{}').expect(415),
      await post().set('Content-Type', 'application/json').send('{"source": x}').expect(422),
      // A path or method no operation has: answered before any guard runs.
      await app.http.get('/api/v1/no_such_operation').set('X-API-Key', key).expect(404),
      await app.http.delete('/api/v1/health').set('X-API-Key', key).expect(405),
    ];
    for (const response of refused)
      expect({
        status: response.status,
        headers: Object.keys(response.headers).filter((name) => /ratelimit/i.test(name)),
      }).toEqual({ status: response.status, headers: [] });
    const counted = await app.http.get('/api/v1/health').set('X-API-Key', key).expect(200);
    expect(counted.headers['x-ratelimit-remaining']).toBe('99');
  });

  it('admits exactly 100 of 150 concurrent requests with a regular key', async () => {
    const { key } = await createKey(app);
    const statuses = await burst([app], key, 150);
    expect(count(statuses, 200)).toBe(100);
    expect(count(statuses, 429)).toBe(50);
  });

  it('answers 429 "Rate limit exceeded" with Retry-After once the budget is spent', async () => {
    const { key } = await createKey(app);
    await burst([app], key, 100);
    const response = await app.http.get('/api/v1/health').set('X-API-Key', key).expect(429);
    expect(response.body).toMatchObject({ detail: 'Rate limit exceeded' });
    expect(Number(response.headers['retry-after'])).toBeGreaterThan(0);
    expect(response.headers['x-ratelimit-remaining']).toBe('0');
    expect(response.headers['x-ratelimit-limit']).toBe('100');
  });

  it('admits a client that waits out Retry-After, with its whole budget', async () => {
    const shortWindows = await startTestApp({ RATE_LIMIT_WINDOW_SECONDS: '3' });
    try {
      await obeyRetryAfter([shortWindows]);
    } finally {
      await shortWindows.close();
    }
  });

  it('documents the budgets it is configured with, not the defaults', async () => {
    const configured = await startTestApp({
      RATE_LIMIT_REGULAR: '7',
      RATE_LIMIT_VALIDATOR: '70',
      RATE_LIMIT_WINDOW_SECONDS: '600',
    });
    try {
      const { body } = await configured.http.get('/openapi.json').expect(200);
      const description = (body as { info: { description: string } }).info.description;
      expect(description).toContain(
        'Regular keys have 7 requests per 600 seconds, validator keys 70',
      );
      expect(description).toContain('`RateLimit-Policy: "default";q=7;w=600`');
      // Nowhere else may it state the default budgets or window as this gateway's (a key's own
      // rate_limit said "null = the class's (regular 100, validator 1000)", "default one hour").
      const defaults = /.{0,60}(?:regular 100\b|validator 1000\b|one hour).{0,20}/g;
      expect(JSON.stringify(body).match(defaults)).toBeNull();
    } finally {
      await configured.close();
    }
  });

  it('keeps separate budgets per key', async () => {
    const first = await createKey(app);
    const second = await createKey(app);
    await burst([app], first.key, 100);
    await app.http.get('/api/v1/health').set('X-API-Key', first.key).expect(429);
    await app.http.get('/api/v1/health').set('X-API-Key', second.key).expect(200);
  });
});

describe('Rate limits shared through Redis', () => {
  let apps: TestApp[];
  const prefix = testRedisPrefix();

  beforeAll(async () => {
    const redis = new Redis(testRedisUrl(), { lazyConnect: true, maxRetriesPerRequest: 1 });
    await redis.connect().catch((error: Error) => {
      throw new Error(
        `These tests need Redis at ${testRedisUrl()} (set TEST_REDIS_URL): ${error.message}`,
      );
    });
    await redis.quit();
    const shared = { REDIS_URL: testRedisUrl(), REDIS_KEY_PREFIX: prefix };
    apps = await Promise.all([startTestApp(shared), startTestApp(shared)]);
  });
  afterAll(() => Promise.all(apps.map((app) => app.close())));

  it('admits exactly 100 of 150 concurrent requests on one instance', async () => {
    const { key } = await createKey(apps[0]);
    const statuses = await burst([apps[0]], key, 150);
    expect(count(statuses, 200)).toBe(100);
    expect(count(statuses, 429)).toBe(50);
  });

  it('admits exactly 100 of 150 concurrent requests split across two instances', async () => {
    const { key } = await createKey(apps[0]);
    const statuses = await burst(apps, key, 150);
    expect(count(statuses, 200)).toBe(100);
    expect(count(statuses, 429)).toBe(50);
  });

  it('reports the shared remaining budget on either instance', async () => {
    const { key } = await createKey(apps[0]);
    await apps[0].http.get('/api/v1/health').set('X-API-Key', key).expect(200);
    const second = await apps[1].http.get('/api/v1/health').set('X-API-Key', key).expect(200);
    expect(second.headers['x-ratelimit-remaining']).toBe('98');
  });

  it('admits a client that waits out Retry-After, with its whole budget, on either instance', async () => {
    const shared = { REDIS_URL: testRedisUrl(), REDIS_KEY_PREFIX: prefix };
    const shortWindows = await Promise.all([
      startTestApp({ ...shared, RATE_LIMIT_WINDOW_SECONDS: '3' }),
      startTestApp({ ...shared, RATE_LIMIT_WINDOW_SECONDS: '3' }),
    ]);
    try {
      await obeyRetryAfter(shortWindows);
    } finally {
      await Promise.all(shortWindows.map((app) => app.close()));
    }
  });

  it('keeps counting exactly after Redis forgot the script (a restart or SCRIPT FLUSH)', async () => {
    const { key } = await createKey(apps[0]);
    await apps[0].http.get('/api/v1/health').set('X-API-Key', key).expect(200);
    const redis = new Redis(testRedisUrl());
    try {
      await redis.script('FLUSH');
    } finally {
      await redis.quit();
    }
    // The script is sent by its SHA; the NOSCRIPT answer makes the client send it again.
    const second = await apps[1].http.get('/api/v1/health').set('X-API-Key', key).expect(200);
    expect(second.headers['x-ratelimit-remaining']).toBe('98');
  });

  it('keeps its counters under REDIS_KEY_PREFIX, apart from other deployments', async () => {
    const { key, id } = await createKey(apps[0]);
    await apps[0].http.get('/api/v1/health').set('X-API-Key', key).expect(200);
    await apps[0].http.get('/api/v1/health').set('X-API-Key', 'sk_live_wrong').expect(401);
    const redis = new Redis(testRedisUrl());
    try {
      expect(await redis.keys(`${prefix}*${id}*`)).not.toHaveLength(0);
      expect(await redis.keys(`${prefix}*authfail*`)).not.toHaveLength(0);
      expect(await redis.keys(`ratelimit:*${id}*`)).toHaveLength(0);
    } finally {
      await redis.quit();
    }
  });
});

import { createKey } from '../support/fixtures';
import {
  startTestApp,
  TEST_MASTER_KEY,
  TestApp,
  testRedisPrefix,
  testRedisUrl,
} from '../support/test-app';

// One key's view: what a key admin reads to see who is near their limit, without spending it.

const health = (app: TestApp, key: string) => app.http.get('/api/v1/health').set('X-API-Key', key);
const view = (app: TestApp, id: string) =>
  app.http.get(`/api/v1/keys/${id}`).set('X-API-Key', TEST_MASTER_KEY);

describe('One API key and its budget', () => {
  let app: TestApp;

  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(() => app.close());

  it('shows the key as listed, and its budget as its last answer gave it, without counting', async () => {
    const { key, id } = await createKey(app, { name: 'near-the-limit', rate_limit: 5 });
    await health(app, key).expect(200);
    const last = await health(app, key).expect(200);

    const shown = await view(app, id).expect(200);
    expect(shown.headers['cache-control']).toBe('no-store');
    const list = await app.http.get('/api/v1/keys').set('X-API-Key', TEST_MASTER_KEY).expect(200);
    const { usage, ...summary } = shown.body;
    expect(summary).toEqual(list.body.keys.find((listed: { id: string }) => listed.id === id));
    expect(usage).toEqual({
      limit: 5,
      window_seconds: 3600,
      used: 2,
      remaining: Number(last.headers['x-ratelimit-remaining']),
      resets_in_seconds: expect.any(Number),
      rate_limited: false,
    });
    expect(
      Math.abs(usage.resets_in_seconds - Number(last.headers['x-ratelimit-reset'])),
    ).toBeLessThanOrEqual(1);
    expect(JSON.stringify(shown.body)).not.toContain(key);

    // Reading it spent nothing of the key's budget.
    await view(app, id).expect(200);
    const next = await health(app, key).expect(200);
    expect(next.headers['x-ratelimit-remaining']).toBe('2');
  });

  it("shows a key in its cool-down as rate-limited until the 429's Retry-After", async () => {
    const { key, id } = await createKey(app, { rate_limit: 1 });
    await health(app, key).expect(200);
    const refused = await health(app, key).expect(429);
    const { body } = await view(app, id).expect(200);
    expect(body.usage).toMatchObject({ limit: 1, used: 1, remaining: 0, rate_limited: true });
    expect(
      Math.abs(body.usage.resets_in_seconds - Number(refused.headers['retry-after'])),
    ).toBeLessThanOrEqual(1);
  });

  it('shows a key never used with its whole budget, and a deactivated key as listed', async () => {
    const { id } = await createKey(app, { tier: 'validator' });
    const fresh = await view(app, id).expect(200);
    expect(fresh.body.usage).toEqual({
      limit: 1000,
      window_seconds: 3600,
      used: 0,
      remaining: 1000,
      resets_in_seconds: 0,
      rate_limited: false,
    });
    expect(fresh.body.last_used_at).toBeNull();
    await app.http
      .post(`/api/v1/keys/${id}/deactivate`)
      .set('X-API-Key', TEST_MASTER_KEY)
      .expect(200);
    const ended = await view(app, id).expect(200);
    expect(ended.body).toMatchObject({ is_active: false, deactivated_at: expect.any(String) });
  });

  it('answers 404 for an unknown id, 400 for a key in the path, 403 without the master key', async () => {
    const { key, id } = await createKey(app);
    for (const path of ['3a49b7bb-48be-448d-915e-760ac904253e', 'not-a-uuid']) {
      const missing = await view(app, path).expect(404);
      expect(missing.body).toMatchObject({ detail: 'API key not found' });
      expect(missing.headers['cache-control']).toBeUndefined();
    }
    // Keys go in X-API-Key only, as for PATCH.
    await view(app, key).expect(400);
    await app.http.get(`/api/v1/keys/${id}`).set('X-API-Key', key).expect(403);
    await app.http.get(`/api/v1/keys/${id}`).expect(401);
  });
});

describe("One key's budget across replicas sharing Redis", () => {
  let apps: TestApp[];

  beforeAll(async () => {
    const shared = { REDIS_URL: testRedisUrl(), REDIS_KEY_PREFIX: testRedisPrefix() };
    apps = await Promise.all([startTestApp(shared), startTestApp(shared)]);
  });
  afterAll(() => Promise.all(apps.map((app) => app.close())));

  it('shows on each replica the count made on both', async () => {
    const { key, id } = await createKey(apps[0], { rate_limit: 10 });
    await health(apps[0], key).expect(200);
    await health(apps[1], key).expect(200);
    await health(apps[1], key).expect(200);
    for (const app of apps) {
      const { body } = await view(app, id).expect(200);
      expect(body.usage).toMatchObject({ limit: 10, used: 3, remaining: 7 });
    }
  });
});

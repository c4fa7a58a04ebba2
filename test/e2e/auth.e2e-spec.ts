import { DataSource, Logger } from 'typeorm';
import { createKey } from '../support/fixtures';
import { startTestApp, TEST_MASTER_KEY, TestApp } from '../support/test-app';

describe('Authentication', () => {
  let app: TestApp;

  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(() => app.close());

  // RFC 9110 §15.5.2: a 401 names how to authenticate (here, and on the expired key's 401 in
  // api-key-settings; the answer checker holds every documented 401 to the header).
  const CHALLENGE = 'APIKey header="X-API-Key"';

  it('answers 401 "Missing API key" without the header, with the challenge', async () => {
    const response = await app.http.get('/api/v1/health').expect(401);
    expect(response.body).toMatchObject({ detail: 'Missing API key' });
    expect(response.headers['www-authenticate']).toBe(CHALLENGE);
  });

  it('answers 401 "Invalid API key" for an unknown key, with the challenge', async () => {
    const response = await app.http
      .get('/api/v1/health')
      .set('X-API-Key', 'sk_live_not-a-real-key')
      .expect(401);
    expect(response.body).toMatchObject({ detail: 'Invalid API key' });
    expect(response.headers['www-authenticate']).toBe(CHALLENGE);
  });

  it('documents the challenge on every 401, and nowhere else', async () => {
    type Operation = { responses: Record<string, { headers?: object }> };
    const paths: Record<string, Record<string, Operation>> = (
      await app.http.get('/openapi.json').expect(200)
    ).body.paths;
    const header = { $ref: '#/components/headers/WWW-Authenticate' };
    for (const item of Object.values(paths))
      for (const operation of Object.values(item))
        for (const [status, response] of Object.entries(operation.responses))
          expect([status, response.headers]).toEqual([
            status,
            status === '401'
              ? expect.objectContaining({ 'WWW-Authenticate': header })
              : expect.not.objectContaining({ 'WWW-Authenticate': header }),
          ]);
  });

  it('accepts the master key and a regular key on ordinary operations', async () => {
    const regular = await createKey(app);
    await app.http.get('/api/v1/health').set('X-API-Key', TEST_MASTER_KEY).expect(200);
    await app.http.get('/api/v1/health').set('X-API-Key', regular.key).expect(200);
  });

  it('answers 403 when a regular or validator key manages keys', async () => {
    for (const tier of ['regular', 'validator'] as const) {
      const { key } = await createKey(app, { tier });
      const list = await app.http.get('/api/v1/keys').set('X-API-Key', key).expect(403);
      expect(list.body).toMatchObject({ detail: 'This operation requires the master key' });
      await app.http.post('/api/v1/keys').set('X-API-Key', key).send({ name: 'x' }).expect(403);
      await app.http.post(`/api/v1/keys/${key}/deactivate`).set('X-API-Key', key).expect(403);
      await app.http.get('/api/v1/monitoring/system-status').set('X-API-Key', key).expect(403);
    }
  });

  it('lets only validator-class keys submit desirabilities', async () => {
    const regular = await createKey(app, { tier: 'regular' });
    const validator = await createKey(app, { tier: 'validator' });
    const body = { desirabilities: [] };
    const denied = await app.http
      .post('/api/v1/set_desirabilities')
      .set('X-API-Key', regular.key)
      .send(body)
      .expect(403);
    expect(denied.body).toMatchObject({ detail: 'This operation requires a validator key' });
    const allowed = await app.http
      .post('/api/v1/set_desirabilities')
      .set('X-API-Key', validator.key)
      .send(body);
    expect(allowed.status).not.toBe(403);
    expect(allowed.status).not.toBe(401);
  });

  it('serves the documentation without a key', async () => {
    await app.http.get('/openapi.json').expect(200);
    const docs = await app.http.get('/docs').redirects(1).expect(200);
    expect(docs.text).toContain('swagger');
  });
});

describe('Brute-force protection', () => {
  let app: TestApp;

  beforeAll(async () => {
    app = await startTestApp({ AUTH_FAILURE_LIMIT: '20', AUTH_FAILURE_WINDOW_SECONDS: '60' });
  });
  afterAll(() => app.close());

  it('answers 429 once one address has failed authentication 20 times in a minute', async () => {
    const statuses: number[] = [];
    for (let attempt = 0; attempt < 25; attempt++) {
      const response = await app.http
        .get('/api/v1/health')
        .set('X-API-Key', `sk_live_guess_${attempt}`);
      statuses.push(response.status);
    }
    expect(statuses.slice(0, 20).every((status) => status === 401)).toBe(true);
    expect(statuses.slice(20).every((status) => status === 429)).toBe(true);
  });
});

describe('A locked-out address', () => {
  let app: TestApp;

  beforeAll(async () => {
    app = await startTestApp({ AUTH_FAILURE_LIMIT: '5', AUTH_FAILURE_WINDOW_SECONDS: '60' });
  });
  afterAll(() => app.close());

  it('gets 429 with Retry-After, before any key is looked up in the database', async () => {
    for (let attempt = 0; attempt < 5; attempt++)
      await app.http.get('/api/v1/health').set('X-API-Key', `sk_live_guess_${attempt}`).expect(401);
    const locked = await app.http
      .get('/api/v1/health')
      .set('X-API-Key', 'sk_live_guess_5')
      .expect(429);
    expect(locked.headers['retry-after']).toMatch(/^\d+$/);
    expect(Number(locked.headers['retry-after'])).toBeGreaterThan(0);
    expect(Number(locked.headers['retry-after'])).toBeLessThanOrEqual(60);

    // Every query TypeORM sends passes its logger: count those that read the keys.
    const dataSource = app.app.get(DataSource);
    const original = dataSource.logger;
    let keyQueries = 0;
    dataSource.logger = Object.assign(Object.create(original) as Logger, {
      logQuery: (query: string) => {
        if (/api_keys/.test(query)) keyQueries += 1;
      },
    });
    try {
      for (let attempt = 0; attempt < 100; attempt++) {
        const answer = await app.http
          .get('/api/v1/health')
          .set('X-API-Key', `sk_live_guess_more_${attempt}`)
          .expect(429);
        // Whole seconds (RFC 9110 delay-seconds), within the lockout's 60 s window.
        expect(answer.headers['retry-after']).toMatch(/^\d+$/);
        expect(Number(answer.headers['retry-after'])).toBeLessThanOrEqual(60);
        expect(answer.body).toMatchObject({ detail: expect.stringMatching(/^Too many failed/) });
      }
    } finally {
      dataSource.logger = original;
    }
    expect(keyQueries).toBe(0);
  });
});

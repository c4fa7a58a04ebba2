import { once } from 'node:events';
import { connect } from 'node:net';
import { DataSource, Logger } from 'typeorm';
import { ERROR_DETAILS } from '../../src/common/errors/error-details';
import { SecretScanner } from '../../src/common/security/secret-scanner';
import { ApiKeysService } from '../../src/modules/api-keys/api-keys.service';
import { createKey } from '../support/fixtures';
import { exchange, parse } from '../support/raw-http';
import {
  startTestApp,
  TEST_MASTER_KEY,
  TestApp,
  testRedisPrefix,
  testRedisUrl,
} from '../support/test-app';

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

  it('says where the key goes when it came as a bearer token, with the challenge', async () => {
    const { key } = await createKey(app);
    for (const authorization of [`Bearer ${key}`, key]) {
      const response = await app.http
        .get('/api/v1/health')
        .set('Authorization', authorization)
        .expect(401);
      expect(response.body).toMatchObject({
        detail: 'Missing API key: send it in the X-API-Key header, not Authorization',
      });
      expect(response.headers['www-authenticate']).toBe(CHALLENGE);
    }
  });

  it('documents the challenge on every 401, and nowhere else', async () => {
    type Operation = { responses: Record<string, { headers?: object }> };
    const paths: Record<string, Record<string, Operation>> = (
      await app.http.get('/openapi.json').expect(200)
    ).body.paths;
    const header = { $ref: '#/components/headers/WWW-Authenticate' };
    const operations = Object.values(paths).flatMap((item) => Object.values(item));
    // Every operation needs a key: none without a 401 (else the loop below passed on none).
    expect(operations.filter((operation) => !operation.responses['401'])).toEqual([]);
    for (const operation of operations)
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

  it('reads an X-API-Key sent twice (a client’s and a proxy’s) as its first copy, as the original system', async () => {
    const regular = await createKey(app);
    const port = Number(new URL(app.url).port);
    const statusWith = async (first: string, second: string) =>
      parse(
        await exchange(port, (socket) =>
          socket.write(
            'GET /api/v1/health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n' +
              `X-API-Key: ${first}\r\nX-API-Key: ${second}\r\n\r\n`,
          ),
        ),
      ).status;
    await expect(statusWith(regular.key, regular.key)).resolves.toBe(200);
    await expect(statusWith(TEST_MASTER_KEY, 'sk_live_other')).resolves.toBe(200);
    await expect(statusWith('sk_live_other', regular.key)).resolves.toBe(401);
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

  it('points the bare address to the documentation, without a key', async () => {
    const pointer = await app.http
      .get('/')
      .expect(200)
      .expect('Content-Type', /^application\/json/);
    expect(pointer.body).toEqual({
      name: 'Data Universe Validator API',
      docs: '/docs',
      openapi: '/openapi.json',
    });
    expect(pointer.headers['x-request-id']).toBeDefined();
    await app.http.get(pointer.body.openapi).expect(200);
    await app.http.get(pointer.body.docs).redirects(1).expect(200);
    // The way to the document, not an operation of it (test/support/contract.ts).
    const document = (await app.http.get('/openapi.json').expect(200)).body;
    expect(Object.keys(document.paths)).not.toContain('/');
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

describe('Brute-force protection of the metrics token', () => {
  const METRICS_TOKEN = 'metrics-token-for-auth-tests-0123';
  let app: TestApp;

  beforeAll(async () => {
    app = await startTestApp({
      METRICS_TOKEN,
      AUTH_FAILURE_LIMIT: '20',
      AUTH_FAILURE_WINDOW_SECONDS: '60',
    });
  });
  afterAll(() => app.close());

  // Beside a key, a wrong token used to let the key answer (a 403 here) uncounted, and the
  // right one 200: guesses at the token without limit (an audit's finding).
  it('counts wrong bearer tokens beside a valid key, and locks the address out after 20', async () => {
    const { key } = await createKey(app);
    // Admitted before, the key would be let through its address's lockout on its own.
    await app.http.get('/api/v1/health').set('X-API-Key', key).expect(200);
    const scrape = (token: string) =>
      app.http.get('/metrics').set('X-API-Key', key).set('Authorization', `Bearer ${token}`);
    const statuses: number[] = [];
    for (let attempt = 0; attempt < 20; attempt++) {
      const response = await scrape(`metrics-token-guess-${attempt}`);
      statuses.push(response.status);
      if (response.status === 401)
        expect(response.body).toMatchObject({ detail: 'Invalid metrics token' });
    }
    expect(statuses).toEqual(Array(20).fill(401));
    // Locked out: the right token too, though the key beside it was admitted before.
    await scrape('metrics-token-guess-20').expect(429);
    await scrape(METRICS_TOKEN).expect(429);
  });
});

describe('Secrets outside the authentication headers', () => {
  const METRICS_TOKEN = 'metrics-token-for-auth-tests-4567';
  let app: TestApp;
  let address = 0;
  /** A client of its own (TRUST_PROXY=loopback), so that each test's lockout is its own. */
  const client = () => `198.51.100.${++address}`;

  beforeAll(async () => {
    app = await startTestApp({
      METRICS_TOKEN,
      TRUST_PROXY: 'loopback',
      AUTH_FAILURE_LIMIT: '5',
      AUTH_FAILURE_WINDOW_SECONDS: '60',
    });
  });
  afterAll(() => app.close());

  // Refused before authentication, the 400 told anyone whether a guess at the master key was
  // right (400, else 404 or 401), thousands of guesses a request, never counted towards the
  // address's lockout (an audit's finding).
  it('answers 401 to a request without a valid key carrying the master key, counting the failure', async () => {
    const from = client();
    const guess = (path: string) =>
      app.http.get(path).set('X-Forwarded-For', from).set('X-API-Key', 'sk_live_guess');
    const missing = await app.http
      .get(`/api/v1/health?k=${TEST_MASTER_KEY}`)
      .set('X-Forwarded-For', from)
      .expect(401);
    expect(missing.body).toMatchObject({ detail: 'Missing API key' });
    for (let attempt = 0; attempt < 5; attempt++) {
      const refused = await guess(`/api/v1/health?k=${TEST_MASTER_KEY}&attempt=${attempt}`);
      expect({ status: refused.status, body: refused.body }).toEqual({
        status: 401,
        body: expect.objectContaining({ detail: 'Invalid API key' }),
      });
    }
    await guess(`/api/v1/health?k=${TEST_MASTER_KEY}`).expect(429);
  });

  it('answers 400 to a key that carries the master key elsewhere, charged, before anything is stored', async () => {
    const from = client();
    const { key } = await createKey(app);
    const refused = await app.http
      .get(`/api/v1/get_bytes_by_label?label=${encodeURIComponent(TEST_MASTER_KEY)}`)
      .set('X-Forwarded-For', from)
      .set('X-API-Key', key)
      .expect(400);
    expect(refused.body).toMatchObject({ detail: ERROR_DETAILS.misplacedSecret });
    expect(refused.headers['x-ratelimit-remaining']).toBe('99');
    // The master key's own request, on an operation charged to no budget: refused as well, and
    // no key is made with it as its name.
    const named = `team ${TEST_MASTER_KEY}`;
    await app.http
      .post('/api/v1/keys')
      .set('X-Forwarded-For', from)
      .set('X-API-Key', TEST_MASTER_KEY)
      .send({ name: named })
      .expect(400);
    const listed = await app.http
      .get('/api/v1/keys')
      .set('X-Forwarded-For', from)
      .set('X-API-Key', TEST_MASTER_KEY)
      .expect(200);
    expect(JSON.stringify(listed.body)).not.toContain(TEST_MASTER_KEY);
  });

  it('answers 400 to an issued key outside the headers before authentication, uncounted', async () => {
    const from = client();
    const { key } = await createKey(app);
    for (let attempt = 0; attempt < 6; attempt++)
      await app.http
        .get(`/api/v1/health?k=${key}`)
        .set('X-Forwarded-For', from)
        .set('X-API-Key', 'sk_live_guess')
        .expect(400);
    await app.http
      .get('/api/v1/health')
      .set('X-Forwarded-For', from)
      .set('X-API-Key', key)
      .expect(200);
  });

  // An attacker audit: scanned before authentication, a 1 MB body of escapes cost some 180 ms
  // of the one thread per request, and a client without a key stalled every other request for
  // seconds. A body is scanned once its key is admitted and the request charged.
  it('answers 401 to a body holding an issued key without scanning it, and 400 once a key is admitted, charged', async () => {
    const from = client();
    const { key } = await createKey(app);
    const body = { keywords: [key, '%2525'.repeat(10_000)], source: 'X' };
    const scans = jest.spyOn(SecretScanner.prototype, 'contains');
    try {
      const keyless = await app.http
        .post('/api/v1/on_demand_data_request')
        .set('X-Forwarded-For', from)
        .send(body)
        .expect(401);
      expect(keyless.body).toMatchObject({ detail: 'Missing API key' });
      expect(scans.mock.calls.filter(([text]) => text.includes(key))).toEqual([]);
      const refused = await app.http
        .post('/api/v1/on_demand_data_request')
        .set('X-Forwarded-For', from)
        .set('X-API-Key', key)
        .send(body)
        .expect(400);
      expect(refused.body).toMatchObject({ detail: ERROR_DETAILS.misplacedSecret });
      expect(refused.headers['x-ratelimit-remaining']).toBe('99');
    } finally {
      scans.mockRestore();
    }
  });

  it('serves /metrics to the metrics token whatever its query holds: it reads none of it', async () => {
    await app.http
      .get(`/metrics?k=${TEST_MASTER_KEY}`)
      .set('X-Forwarded-For', client())
      .set('Authorization', `Bearer ${METRICS_TOKEN}`)
      .expect(200);
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

    // Refused before the key check, a request keeps its own answer (README, "Authentication and
    // keys").
    const unparsed = await app.http
      .post('/api/v1/on_demand_data_request')
      .set('X-API-Key', TEST_MASTER_KEY)
      .set('Content-Type', 'application/json')
      .send('{"source":')
      .expect(422);
    expect(unparsed.body.detail[0]).toMatchObject({ type: 'json_invalid' });
    await app.http.get('/api/v1/no-such-path').set('X-API-Key', TEST_MASTER_KEY).expect(404);
    await app.http.get('/api/v1/health').set('X-API-Key', TEST_MASTER_KEY).expect(429);
  });
});

describe('Brute-force protection with Redis, against guesses sent at once', () => {
  let app: TestApp;

  beforeAll(async () => {
    app = await startTestApp({
      REDIS_URL: testRedisUrl(),
      AUTH_FAILURE_LIMIT: '5',
      AUTH_FAILURE_WINDOW_SECONDS: '60',
    });
  });
  afterAll(() => app.close());

  // Each failure reaches the shared count a Redis round trip later; the requests behind it were
  // all checked meanwhile (found by a security audit). Sent on connections of their own: one
  // connection's requests are taken in turn (pipelined-requests.ts). The master key sent while
  // guesses are in flight waits for them: auth-failure-limiter.spec.ts holds that; here it
  // comes after them.
  it('tries no more guesses than the limit, then refuses the master key', async () => {
    const guesses = Array.from({ length: 30 }, (_, i) => `not-the-master-key-${i}`);
    const statuses = await atOnce(app, guesses);
    expect(statuses.filter((status) => status === 401)).toHaveLength(5);
    expect(statuses.filter((status) => status === 429)).toHaveLength(25);
    expect(await atOnce(app, [TEST_MASTER_KEY])).toEqual([429]);
  });
});

describe('Brute-force protection, to a burst of valid keys', () => {
  let app: TestApp;

  beforeAll(async () => {
    app = await startTestApp({ AUTH_FAILURE_LIMIT: '5', AUTH_FAILURE_WINDOW_SECONDS: '60' });
  });
  afterAll(() => app.close());

  // Lookups of valid keys in flight had counted as guesses: a busy client's burst refused the
  // operator's master key from the same address (found by a soak test).
  it('admits the master key behind a burst of valid keys being looked up', async () => {
    const keys: string[] = [];
    for (let i = 0; i < 12; i++) keys.push((await createKey(app)).key);
    const statuses = await atOnce(app, [...keys, TEST_MASTER_KEY]);
    expect(statuses).toEqual(Array(13).fill(200));
  });
});

describe('Brute-force protection across two replicas sharing Redis', () => {
  let replicas: TestApp[];

  beforeAll(async () => {
    const env = {
      REDIS_URL: testRedisUrl(),
      REDIS_KEY_PREFIX: testRedisPrefix(),
      AUTH_FAILURE_LIMIT: '5',
      AUTH_FAILURE_WINDOW_SECONDS: '60',
    };
    replicas = [await startTestApp(env), await startTestApp(env)];
  });
  afterAll(() => Promise.all(replicas.map((replica) => replica.close())));

  // The other replica learned of the lockout only at a failure of its own, and compared the
  // master key before any (found by an audit of two replicas).
  it('refuses the master key on one replica once the address failed its limit on the other', async () => {
    const [first, second] = replicas;
    for (let i = 0; i < 5; i++)
      await first.http.get('/api/v1/health').set('X-API-Key', `wrong-${i}`).expect(401);
    const refused = await second.http
      .get('/api/v1/health')
      .set('X-API-Key', TEST_MASTER_KEY)
      .expect(429);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(50);
    await second.http.get('/api/v1/health').set('X-API-Key', 'wrong-again').expect(429);
  });
});

describe('A locked-out address, to keys admitted before', () => {
  let app: TestApp;

  beforeAll(async () => {
    app = await startTestApp({ AUTH_FAILURE_LIMIT: '5', AUTH_FAILURE_WINDOW_SECONDS: '60' });
  });
  afterAll(() => app.close());

  it('lets an issued key that worked before through, and refuses new keys and the master key', async () => {
    const working = await createKey(app);
    const unused = await createKey(app);
    await app.http.get('/api/v1/health').set('X-API-Key', working.key).expect(200);
    for (let attempt = 0; attempt < 5; attempt++)
      await app.http.get('/api/v1/health').set('X-API-Key', `sk_live_guess_${attempt}`).expect(401);
    await app.http.get('/api/v1/health').set('X-API-Key', 'sk_live_guess_5').expect(429);

    // The team's working client behind the same address goes on working...
    await app.http.get('/api/v1/health').set('X-API-Key', working.key).expect(200);
    // ...but a key never admitted is not looked up (that would answer guesses), nor is the
    // master key, the one secret chosen by hand, let through.
    await app.http.get('/api/v1/health').set('X-API-Key', unused.key).expect(429);
    await app.http.get('/api/v1/health').set('X-API-Key', TEST_MASTER_KEY).expect(429);
    await app.http.get('/api/v1/health').set('X-API-Key', 'sk_live_guess_6').expect(429);

    // Deactivated since, the key fails like any other and is let through no more.
    await app.app.get(ApiKeysService).deactivate(working.id, 'master');
    await app.http.get('/api/v1/health').set('X-API-Key', working.key).expect(429);
    await app.http.get('/api/v1/health').set('X-API-Key', working.key).expect(429);
  });
});

describe('Behind a proxy', () => {
  const PROXY_ENV = { AUTH_FAILURE_LIMIT: '5', AUTH_FAILURE_WINDOW_SECONDS: '60' };
  const GUESSER = '203.0.113.9';
  const COLLEAGUE = '198.51.100.7';

  /** Locks GUESSER out: 5 wrong keys answered 401, the 6th 429. */
  async function lockOutGuesser(app: TestApp): Promise<void> {
    for (let attempt = 0; attempt < 5; attempt++)
      await app.http
        .get('/api/v1/health')
        .set('X-Forwarded-For', GUESSER)
        .set('X-API-Key', `sk_live_bad${attempt}`)
        .expect(401);
    await app.http
      .get('/api/v1/health')
      .set('X-Forwarded-For', GUESSER)
      .set('X-API-Key', 'sk_live_bad5')
      .expect(429);
  }

  describe('without TRUST_PROXY', () => {
    let app: TestApp;

    beforeAll(async () => {
      app = await startTestApp(PROXY_ENV);
    });
    afterAll(() => app.close());

    it('ignores X-Forwarded-For: a made-up one does not dodge the lockout', async () => {
      const { key } = await createKey(app);
      await lockOutGuesser(app);
      await app.http
        .get('/api/v1/health')
        .set('X-Forwarded-For', COLLEAGUE)
        .set('X-API-Key', 'sk_live_bad6')
        .expect(429);
      await app.http
        .get('/api/v1/health')
        .set('X-Forwarded-For', COLLEAGUE)
        .set('X-API-Key', key)
        .expect(429);
    });
  });

  describe('with TRUST_PROXY=loopback', () => {
    let app: TestApp;

    beforeAll(async () => {
      app = await startTestApp({ ...PROXY_ENV, TRUST_PROXY: 'loopback' });
    });
    afterAll(() => app.close());

    it("counts each client's failures apart, so one client's guesses lock out no other", async () => {
      const { key } = await createKey(app);
      await lockOutGuesser(app);
      // The colleague behind the same proxy (the peer, 127.0.0.1) is another client.
      await app.http
        .get('/api/v1/health')
        .set('X-Forwarded-For', COLLEAGUE)
        .set('X-API-Key', key)
        .expect(200);
      for (let attempt = 0; attempt < 5; attempt++)
        await app.http
          .get('/api/v1/health')
          .set('X-Forwarded-For', COLLEAGUE)
          .set('X-API-Key', `sk_live_typo${attempt}`)
          .expect(401);
      // An address prepended by the guesser is not believed: the proxy appended the real one.
      await app.http
        .get('/api/v1/health')
        .set('X-Forwarded-For', `192.0.2.1, ${GUESSER}`)
        .set('X-API-Key', 'sk_live_bad7')
        .expect(429);
      // The proxy itself, without the header, is a client of its own.
      await app.http.get('/api/v1/health').set('X-API-Key', TEST_MASTER_KEY).expect(200);
    });

    // Each guess from a new address of one /64 (2^64 of them, one machine's) had been a 401
    // that added to no lockout, the master key let in after them (an audit's finding).
    it('counts an IPv6 client by its /64, and an IPv4-mapped one as its IPv4 address', async () => {
      for (let host = 1; host <= 5; host++)
        await app.http
          .get('/api/v1/health')
          .set('X-Forwarded-For', `2001:db8:1:2::${host}`)
          .set('X-API-Key', `sk_live_v6guess${host}`)
          .expect(401);
      await app.http
        .get('/api/v1/health')
        .set('X-Forwarded-For', '2001:db8:1:2::abcd:1')
        .set('X-API-Key', TEST_MASTER_KEY)
        .expect(429);
      await app.http
        .get('/api/v1/health')
        .set('X-Forwarded-For', '2001:db8:1:3::1')
        .set('X-API-Key', TEST_MASTER_KEY)
        .expect(200);
      // As a dual-stack socket reports an IPv4 peer, then as the IPv4 address it is.
      for (let attempt = 0; attempt < 5; attempt++)
        await app.http
          .get('/api/v1/health')
          .set('X-Forwarded-For', '::ffff:192.0.2.77')
          .set('X-API-Key', `sk_live_v4guess${attempt}`)
          .expect(401);
      await app.http
        .get('/api/v1/health')
        .set('X-Forwarded-For', '192.0.2.77')
        .set('X-API-Key', TEST_MASTER_KEY)
        .expect(429);
    });
  });
});

/**
 * The status of each request, in order, each sent on a connection of its own, all written in
 * one turn of the event loop once every connection is open: as many in flight at once as
 * there are keys.
 */
async function atOnce(app: TestApp, keys: string[]): Promise<number[]> {
  const port = Number(new URL(app.url).port);
  const sockets = await Promise.all(
    keys.map(async () => {
      const socket = connect(port, '127.0.0.1');
      await once(socket, 'connect');
      return socket;
    }),
  );
  keys.forEach((key, index) =>
    sockets[index].write(
      `GET /api/v1/health HTTP/1.1\r\nHost: localhost\r\nX-API-Key: ${key}\r\n\r\n`,
    ),
  );
  return Promise.all(
    sockets.map(async (socket) => {
      const [chunk] = (await once(socket, 'data')) as [Buffer];
      socket.destroy();
      return Number(/^HTTP\/1\.1 (\d{3}) /.exec(chunk.toString('latin1'))![1]);
    }),
  );
}

import Redis from 'ioredis';
import { Clock } from '../../src/common/clock/clock';
import { createKey } from '../support/fixtures';
import {
  startTestApp,
  TEST_MASTER_KEY,
  TestApp,
  testRedisPrefix,
  testRedisUrl,
} from '../support/test-app';

// Keys for real teams: an expiry and a budget of their own, set at creation or changed later.

const HOUR_MS = 3_600_000;

describe('API key expiry and own rate limits', () => {
  let app: TestApp;
  let clock: Clock;

  beforeAll(async () => {
    app = await startTestApp({ AUTH_FAILURE_LIMIT: '3', AUTH_FAILURE_WINDOW_SECONDS: '60' });
    clock = app.app.get(Clock);
  });
  afterAll(() => app.close());

  /** An instant `ms` from the app's clock (tests move that clock forward). */
  const fromNow = (ms: number) => new Date(clock.now().getTime() + ms).toISOString();
  const health = (key: string) => app.http.get('/api/v1/health').set('X-API-Key', key);
  const patch = (id: string, body: unknown) =>
    app.http
      .patch(`/api/v1/keys/${id}`)
      .set('X-API-Key', TEST_MASTER_KEY)
      .send(body as object);
  const listed = async (id: string) => {
    const list = await app.http.get('/api/v1/keys').set('X-API-Key', TEST_MASTER_KEY).expect(200);
    return (list.body.keys as { id: string }[]).find((key) => key.id === id);
  };

  it('creates a key with an expiry and a limit, and shows both when listed', async () => {
    const expiresAt = '2099-01-01T12:00:00+02:00';
    const created = await app.http
      .post('/api/v1/keys')
      .set('X-API-Key', TEST_MASTER_KEY)
      .send({ name: 'team', expires_at: expiresAt, rate_limit: 5000 })
      .expect(200);
    expect(created.body).toMatchObject({
      expires_at: '2099-01-01T10:00:00.000Z',
      rate_limit: 5000,
    });
    expect(await listed(created.body.id)).toMatchObject({
      expires_at: '2099-01-01T10:00:00.000Z',
      rate_limit: 5000,
    });
  });

  it.each([
    [{ expires_at: '2001-01-01T00:00:00Z' }, 'datetime_future', 'Input should be in the future'],
    [{ expires_at: '2099-01-01T00:00:00' }, 'value_error', expect.stringContaining('UTC offset')],
    [{ expires_at: '2099-01-01' }, 'value_error', expect.stringContaining('UTC offset')],
    [{ expires_at: 'tomorrow' }, 'value_error', expect.stringContaining('UTC offset')],
    [{ expires_at: 4102444800 }, 'string_type', 'Input should be a valid string'],
    // The year 10000 in UTC: RFC 3339 cannot write it (toISOString made it +010000-…).
    [
      { expires_at: '9999-12-31T23:59:59-23:59' },
      'value_error',
      'Value error, must not be later than 9999-12-31T23:59:59.999999Z once in UTC',
    ],
  ])('refuses expires_at %j with a 422 at ["body","expires_at"]', async (body, type, msg) => {
    const response = await app.http
      .post('/api/v1/keys')
      .set('X-API-Key', TEST_MASTER_KEY)
      .send({ name: 'bad expiry', ...body })
      .expect(422);
    expect(response.body.detail).toEqual([{ loc: ['body', 'expires_at'], type, msg }]);
  });

  // One 422 for the request: the expiry's check against the clock ran after the DTO's checks, in
  // the service, so a bad rate_limit hid it until the client had fixed that (an audit's finding).
  it('lists a past expires_at and a bad rate_limit in one 422, on creation and update, in the schema order', async () => {
    const past = fromNow(-HOUR_MS);
    const both = [
      {
        loc: ['body', 'expires_at'],
        msg: 'Input should be in the future',
        type: 'datetime_future',
      },
      {
        loc: ['body', 'rate_limit'],
        msg: 'Input should be greater than or equal to 1',
        type: 'greater_than_equal',
        ctx: { ge: 1 },
      },
    ];
    const created = await app.http
      .post('/api/v1/keys')
      .set('X-API-Key', TEST_MASTER_KEY)
      .send({ name: 'both wrong', rate_limit: 0, expires_at: past })
      .expect(422);
    expect(created.body.detail).toEqual(both);
    const { id } = await createKey(app);
    const updated = await patch(id, { rate_limit: 0, expires_at: past }).expect(422);
    expect(updated.body.detail).toEqual(both);
  });

  // ISO 8601 allows most of these, RFC 3339 (OpenAPI's `date-time`) none of those; RFC 3339 allows
  // the last two, a leap second and ten fraction digits, which the service does not read. The
  // message names the form it reads, not "RFC 3339", which the last two are.
  it.each([
    '2099-01-01 00:00:00Z',
    '2099-01-01T00:00:00+0200',
    '2099-01-01T00:00Z',
    '2099-01-01T00:00:00,5Z',
    '2099-01-01T00:00:00 Z',
    ' 2099-01-01T00:00:00Z',
    '2099-01-01T00:00:00+24:00',
    '2099-01-01T00:00:00+02',
    '2016-12-31T23:59:60Z',
    '2099-01-01T00:00:00.1234567890Z',
  ])('refuses expires_at %j with a 422 value_error naming the form read', async (expiresAt) => {
    const response = await app.http
      .post('/api/v1/keys')
      .set('X-API-Key', TEST_MASTER_KEY)
      .send({ name: 'bad expiry', expires_at: expiresAt })
      .expect(422);
    expect(response.body.detail).toEqual([
      {
        loc: ['body', 'expires_at'],
        type: 'value_error',
        msg:
          'Value error, must be a date-time YYYY-MM-DDTHH:MM:SS[.fraction] (up to 9 fraction ' +
          'digits) with its UTC offset, Z or ±HH:MM, e.g. 2099-12-31T23:59:59Z',
      },
    ]);
  });

  it.each([
    ['2099-01-01T12:00:00Z', '2099-01-01T12:00:00.000Z'],
    ['2099-01-01t12:00:00z', '2099-01-01T12:00:00.000Z'],
    ['2099-01-01T12:00:00.123456789+05:30', '2099-01-01T06:30:00.123Z'],
    ['2099-01-01T12:00:00-00:00', '2099-01-01T12:00:00.000Z'],
  ])('accepts the RFC 3339 date-time %s as expires_at', async (expiresAt, stored) => {
    const created = await app.http
      .post('/api/v1/keys')
      .set('X-API-Key', TEST_MASTER_KEY)
      .send({ name: 'rfc 3339', expires_at: expiresAt })
      .expect(200);
    expect(created.body.expires_at).toBe(stored);
    const changed = await patch(created.body.id, { expires_at: expiresAt }).expect(200);
    expect(changed.body.expires_at).toBe(stored);
  });

  it('refuses a PATCH expires_at that is not RFC 3339 with the same 422', async () => {
    const { id } = await createKey(app);
    const response = await patch(id, { expires_at: '2099-01-01 00:00:00Z' }).expect(422);
    expect(response.body.detail).toEqual([
      expect.objectContaining({ loc: ['body', 'expires_at'], type: 'value_error' }),
    ]);
    const far = await patch(id, { expires_at: '9999-12-31T23:59:59-23:59' }).expect(422);
    expect(far.body.detail).toEqual([
      expect.objectContaining({ loc: ['body', 'expires_at'], type: 'value_error' }),
    ]);
  });

  const NOT_AN_INTEGER = 'Input should be a valid integer';
  const NOT_PARSED = 'Input should be a valid integer, unable to parse string as an integer';
  it.each([
    [0, 'greater_than_equal', 'Input should be greater than or equal to 1'],
    [1_000_001, 'less_than_equal', 'Input should be less than or equal to 1000000'],
    [1.5, 'int_from_float', 'Input should be a valid integer, got a number with a fractional part'],
    [true, 'int_type', NOT_AN_INTEGER],
    [false, 'int_type', NOT_AN_INTEGER],
    [{}, 'int_type', NOT_AN_INTEGER],
    [[10], 'int_type', NOT_AN_INTEGER],
    ['ten', 'int_parsing', NOT_PARSED],
    ['1e3', 'int_parsing', NOT_PARSED],
    ['10.0', 'int_parsing', NOT_PARSED],
    ['', 'int_parsing', NOT_PARSED],
  ])('refuses rate_limit %j with a 422 %s at ["body","rate_limit"]', async (value, type, msg) => {
    const { id } = await createKey(app);
    const created = await app.http
      .post('/api/v1/keys')
      .set('X-API-Key', TEST_MASTER_KEY)
      .send({ name: 'bad limit', rate_limit: value })
      .expect(422);
    const changed = await patch(id, { rate_limit: value }).expect(422);
    for (const response of [created, changed])
      expect(response.body.detail).toEqual([
        {
          loc: ['body', 'rate_limit'],
          type,
          msg,
          ...(type.endsWith('_equal') ? { ctx: expect.any(Object) } : {}),
        },
      ]);
  });

  // POST documented neither refusal, though it makes both (an audit's).
  it.each([
    ['expiryInThePast', { expires_at: '2001-01-01T00:00:00Z' }],
    ['rateLimitTooLarge', { rate_limit: 1_000_001 }],
  ])('answers the documented 422 example %s on creating and changing a key', async (name, body) => {
    const document = (await app.http.get('/openapi.json').expect(200)).body as {
      paths: Record<string, Record<string, DocumentedOperation>>;
    };
    const example = (path: string, method: string) =>
      document.paths[path][method].responses['422'].content['application/json'].examples[name]
        ?.value.detail;
    const { id } = await createKey(app);
    const created = await app.http
      .post('/api/v1/keys')
      .set('X-API-Key', TEST_MASTER_KEY)
      .send({ name: 'refused', ...body })
      .expect(422);
    const changed = await patch(id, body).expect(422);
    expect(created.body.detail).toEqual(example('/api/v1/keys', 'post'));
    expect(changed.body.detail).toEqual(example('/api/v1/keys/{id}', 'patch'));
  });

  it('reads a rate_limit string of decimal digits as the integer, as pydantic does', async () => {
    const created = await app.http
      .post('/api/v1/keys')
      .set('X-API-Key', TEST_MASTER_KEY)
      .send({ name: 'string limit', rate_limit: '10' })
      .expect(200);
    expect(created.body.rate_limit).toBe(10);
    const changed = await patch(created.body.id, { rate_limit: '20' }).expect(200);
    expect(changed.body.rate_limit).toBe(20);
  });

  it('answers 401 "API key expired" once the expiry passes, without locking its client out', async () => {
    const { key, id } = await createKey(app, { expires_at: fromNow(60_000) });
    const before = await health(key).expect(200);
    expect(before.headers['x-ratelimit-remaining']).toBe('99');
    clock.advance(61_000);
    // More expired requests than AUTH_FAILURE_LIMIT (3): none is a failed authentication.
    for (let i = 0; i < 5; i++) {
      const expired = await health(key).expect(401);
      expect(expired.body).toMatchObject({ detail: 'API key expired' });
      expect(expired.headers['www-authenticate']).toBe('APIKey header="X-API-Key"');
      // Refused before the rate limit: neither counted nor told a budget.
      expect(expired.headers['x-ratelimit-remaining']).toBeUndefined();
    }
    await health('sk_live_not-a-key-at-all-0000000000000').expect(401);
    // Extended, it works again, charged only for the requests it was admitted to make.
    await patch(id, { expires_at: fromNow(HOUR_MS) }).expect(200);
    const renewed = await health(key).expect(200);
    expect(renewed.headers['x-ratelimit-remaining']).toBe('98');
  });

  it("enforces a key's own limit and reports it in both header forms", async () => {
    const { key } = await createKey(app, { rate_limit: 3 });
    for (let remaining = 2; remaining >= 0; remaining--) {
      const response = await health(key).expect(200);
      const reset = response.headers['x-ratelimit-reset'];
      expect(response.headers['x-ratelimit-limit']).toBe('3');
      expect(response.headers['x-ratelimit-remaining']).toBe(String(remaining));
      expect(Number(reset)).toBeGreaterThan(3500);
      expect(response.headers['ratelimit-policy']).toBe('"default";q=3;w=3600');
      expect(response.headers['ratelimit']).toBe(`"default";r=${remaining};t=${reset}`);
    }
    const refused = await health(key).expect(429);
    const retryAfter = refused.headers['retry-after'];
    expect(Number(retryAfter)).toBeGreaterThan(3500);
    expect(refused.headers['x-ratelimit-remaining']).toBe('0');
    expect(refused.headers['x-ratelimit-reset']).toBe(retryAfter);
    expect(refused.headers['ratelimit-policy']).toBe('"default";q=3;w=3600');
    expect(refused.headers['ratelimit']).toBe(`"default";r=0;t=${retryAfter}`);
  });

  /** `count` requests with the key, each answered `status`. */
  const spend = async (key: string, count: number, status = 200) => {
    for (let i = 0; i < count; i++) await health(key).expect(status);
  };

  it('lifts a running cool-down at once when PATCH raises the limit above the count, which stays', async () => {
    const { key, id } = await createKey(app, { rate_limit: 3 });
    await spend(key, 3);
    await spend(key, 1, 429);
    await patch(id, { rate_limit: 1_000_000 }).expect(200);
    const lifted = await health(key).expect(200);
    expect(lifted.headers['x-ratelimit-limit']).toBe('1000000');
    // 3 admitted before and this one (a refused request is not counted): nothing forgotten.
    expect(lifted.headers['x-ratelimit-remaining']).toBe(String(1_000_000 - 4));
    expect(Number(lifted.headers['x-ratelimit-reset'])).toBeLessThanOrEqual(3600);
    expect(lifted.headers['retry-after']).toBeUndefined();
  });

  it("lifts it when PATCH clears the limit to the class's larger budget", async () => {
    const { key, id } = await createKey(app, { rate_limit: 2 });
    await spend(key, 2);
    await spend(key, 1, 429);
    await patch(id, { rate_limit: null }).expect(200);
    const lifted = await health(key).expect(200);
    expect(lifted.headers['x-ratelimit-limit']).toBe('100');
    expect(lifted.headers['x-ratelimit-remaining']).toBe('97');
  });

  it('keeps the cool-down while the new limit is not above the count: lowering is not escaped by PATCH', async () => {
    const { key, id } = await createKey(app, { rate_limit: 10 });
    await spend(key, 3);
    await patch(id, { rate_limit: 2 }).expect(200);
    await spend(key, 1, 429); // 3 counted: more than 2
    await patch(id, { rate_limit: 3 }).expect(200);
    const still = await health(key).expect(429); // 3 counted: not fewer than 3
    expect(still.headers['x-ratelimit-limit']).toBe('3');
    expect(still.headers['x-ratelimit-remaining']).toBe('0');
    expect(still.headers['retry-after']).toBe(still.headers['x-ratelimit-reset']);
    await patch(id, { rate_limit: 10 }).expect(200);
    expect((await health(key).expect(200)).headers['x-ratelimit-remaining']).toBe('6');
  });

  it('changes name, expiry and limit with PATCH, and null clears expiry and limit', async () => {
    const { key, id } = await createKey(app, { name: 'before' });
    await health(key).expect(200); // cached now: the change must still show at once
    const expiresAt = fromNow(HOUR_MS);
    const changed = await patch(id, { name: 'after', expires_at: expiresAt, rate_limit: 7 });
    expect(changed.status).toBe(200);
    expect(changed.body).toMatchObject({
      id,
      name: 'after',
      expires_at: new Date(expiresAt).toISOString(),
      rate_limit: 7,
      is_active: true,
      deactivated_at: null,
    });
    expect(changed.headers['cache-control']).toBe('no-store');
    expect(await listed(id)).toEqual(changed.body);
    expect((await health(key).expect(200)).headers['x-ratelimit-limit']).toBe('7');

    const cleared = await patch(id, { expires_at: null, rate_limit: null }).expect(200);
    expect(cleared.body).toMatchObject({ name: 'after', expires_at: null, rate_limit: null });
    expect((await health(key).expect(200)).headers['x-ratelimit-limit']).toBe('100');
    // The requests made under the other limit still count in the window.
    expect((await health(key).expect(200)).headers['x-ratelimit-remaining']).toBe('96');
  });

  it('refuses an empty PATCH, a null name, a past expiry and unknown fields with 422', async () => {
    const { id } = await createKey(app);
    const empty = await patch(id, {}).expect(422);
    expect(empty.body.detail).toEqual([
      {
        loc: ['body'],
        type: 'value_error',
        msg: 'Value error, give at least one of name, expires_at and rate_limit',
      },
    ]);
    // The document says so too, so that a generated client refuses `{}` before sending it.
    const document = await app.http.get('/openapi.json').expect(200);
    expect(document.body.components.schemas.APIKeyUpdate).toMatchObject({ minProperties: 1 });
    const nullName = await patch(id, { name: null }).expect(422);
    expect(nullName.body.detail).toEqual([
      expect.objectContaining({ loc: ['body', 'name'], type: 'string_type' }),
    ]);
    const past = await patch(id, { expires_at: '2001-01-01T00:00:00Z' }).expect(422);
    expect(past.body.detail).toEqual([
      expect.objectContaining({ loc: ['body', 'expires_at'], type: 'datetime_future' }),
    ]);
    const extra = await patch(id, { tier: 'validator' }).expect(422);
    expect(extra.body.detail).toEqual([
      expect.objectContaining({ loc: ['body', 'tier'], type: 'extra_forbidden' }),
    ]);
  });

  it('answers PATCH with 404 for an unknown id, 409 for a deactivated key, 403 without the master key', async () => {
    const unknown = await patch('00000000-0000-4000-8000-000000000000', { name: 'x' }).expect(404);
    expect(unknown.body).toMatchObject({ detail: 'API key not found' });
    await patch('not-an-id', { name: 'x' }).expect(404);

    const { key, id } = await createKey(app);
    await app.http
      .patch(`/api/v1/keys/${id}`)
      .set('X-API-Key', key)
      .send({ rate_limit: 1_000_000 })
      .expect(403);
    await app.http
      .post(`/api/v1/keys/${id}/deactivate`)
      .set('X-API-Key', TEST_MASTER_KEY)
      .expect(200);
    const deactivated = await patch(id, { name: 'revived?' }).expect(409);
    expect(deactivated.body).toMatchObject({ detail: 'API key is deactivated' });
    expect(await listed(id)).toMatchObject({ name: 'test key', is_active: false });
  });

  it('refuses a full key in the PATCH path (keys go in X-API-Key only)', async () => {
    const { key } = await createKey(app);
    await patch(key, { name: 'x' }).expect(400);
  });
});

describe('A raised key limit across replicas sharing Redis', () => {
  let apps: TestApp[];
  let redis: Redis;
  const prefix = testRedisPrefix();

  beforeAll(async () => {
    redis = new Redis(testRedisUrl(), { keyPrefix: prefix });
    // No key cache: each replica reads the key's limit at every request, so that what is
    // tested is where the block lives, not how fast a replica hears of the change.
    const shared = { REDIS_URL: testRedisUrl(), REDIS_KEY_PREFIX: prefix, KEY_CACHE_TTL_MS: '0' };
    apps = await Promise.all([startTestApp(shared), startTestApp(shared)]);
  });
  afterAll(async () => {
    await Promise.all(apps.map((app) => app.close()));
    await redis.quit();
  });

  const health = (app: TestApp, key: string) =>
    app.http.get('/api/v1/health').set('X-API-Key', key);

  it('lifts the cool-down for every replica, in Redis, and keeps the shared count', async () => {
    const { key, id } = await createKey(apps[0], { rate_limit: 2 });
    const entry = `{ratelimit:default:${id}:default}`;
    await health(apps[0], key).expect(200);
    await health(apps[1], key).expect(200);
    await health(apps[0], key).expect(429);
    expect(await redis.exists(`${entry}:blocked`)).toBe(1);

    await apps[0].http
      .patch(`/api/v1/keys/${id}`)
      .set('X-API-Key', TEST_MASTER_KEY)
      .send({ rate_limit: 1_000_000 })
      .expect(200);
    const lifted = await health(apps[1], key).expect(200);
    // 2 admitted before, on either replica, and this one; the refused one is not counted.
    expect(lifted.headers['x-ratelimit-remaining']).toBe(String(1_000_000 - 3));
    expect(await redis.exists(`${entry}:blocked`)).toBe(0);
    expect(await redis.get(`${entry}:hits`)).toBe('3');
    await health(apps[0], key).expect(200);
  });
});

describe('Headers through CORS', () => {
  let app: TestApp;

  beforeAll(async () => {
    app = await startTestApp({ CORS_ORIGINS: 'https://dashboard.example' });
  });
  afterAll(() => app.close());

  it('exposes to browsers every header the document gives a response, but WWW-Authenticate', async () => {
    const document = (await app.http.get('/openapi.json').expect(200)).body as OpenApiHeaders;
    const documented = new Set<string>();
    for (const operations of Object.values(document.paths))
      for (const operation of Object.values(operations))
        for (const answer of Object.values(operation.responses ?? {})) {
          const response = answer.$ref
            ? document.components.responses[answer.$ref.split('/').pop()!]
            : answer;
          for (const name of Object.keys(response.headers ?? {})) documented.add(name);
        }
    // Read by any browser without being exposed (the Fetch standard's safelisted names), and the
    // challenge, which says nothing the detail does not (docs/decisions.md, "Every 401 carries
    // `WWW-Authenticate`").
    const unexposed = [
      'Cache-Control',
      'Content-Type',
      'Content-Length',
      'Last-Modified',
      'WWW-Authenticate',
    ];
    const response = await app.http
      .get('/api/v1/health')
      .set('X-API-Key', TEST_MASTER_KEY)
      .set('Origin', 'https://dashboard.example')
      .expect(200);
    const exposed = String(response.headers['access-control-expose-headers']).split(',');
    // Rate limits, a dataset's hash, ETag, name and ranges, an aggregate's age and source, a
    // submission's commitment: a browser client read none of the last two kinds (an audit's).
    expect([...documented].filter((name) => !unexposed.includes(name)).sort()).toEqual(
      [...exposed].sort(),
    );
    for (const name of ['RateLimit', 'X-Content-SHA256', 'Age', 'X-Commitment-Sha'])
      expect(exposed).toContain(name);
  });
});

interface OpenApiResponse {
  $ref?: string;
  headers?: Record<string, unknown>;
}

interface OpenApiHeaders {
  paths: Record<string, Record<string, { responses?: Record<string, OpenApiResponse> }>>;
  components: { responses: Record<string, OpenApiResponse> };
}

interface DocumentedOperation {
  responses: Record<
    string,
    { content: Record<string, { examples: Record<string, { value: { detail: unknown } }> }> }
  >;
}

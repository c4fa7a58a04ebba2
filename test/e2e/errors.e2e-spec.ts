import { checkedFetch } from '../support/contract';
import { createKey } from '../support/fixtures';
import { startTestApp, TEST_MASTER_KEY, TestApp } from '../support/test-app';

describe('Error responses', () => {
  let app: TestApp;
  let key: string;

  beforeAll(async () => {
    app = await startTestApp({ RATE_LIMIT_REGULAR: '10000' });
    ({ key } = await createKey(app));
  });
  afterAll(() => app.close());

  const query = (body: unknown) =>
    app.http
      .post('/api/v1/on_demand_data_request')
      .set('X-API-Key', key)
      .set('Content-Type', 'application/json')
      .send(body as object);

  it('reports a missing field as `missing`', async () => {
    const response = await query({}).expect(422);
    expect(response.body).toEqual({
      detail: [{ loc: ['body', 'source'], msg: 'Field required', type: 'missing' }],
      request_id: response.headers['x-request-id'],
    });
  });

  it('reports wrong types with pydantic codes', async () => {
    const response = await query({
      source: 5,
      limit: 'many',
      usernames: 'bob',
      keywords: ['ok', 7],
    }).expect(422);
    expect(response.body.detail).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ loc: ['body', 'source'], type: 'string_type' }),
        expect.objectContaining({ loc: ['body', 'limit'], type: 'int_parsing' }),
        expect.objectContaining({ loc: ['body', 'usernames'], type: 'list_type' }),
        expect.objectContaining({ loc: ['body', 'keywords', 1], type: 'string_type' }),
      ]),
    );
    expect(response.body.detail).toHaveLength(4);
  });

  it('reports out-of-range values with their bound', async () => {
    const high = await query({ source: 'x', limit: 1001 }).expect(422);
    expect(high.body.detail).toEqual([
      {
        loc: ['body', 'limit'],
        msg: 'Input should be less than or equal to 1000',
        type: 'less_than_equal',
        ctx: { le: 1000 },
      },
    ]);
    const low = await query({ source: 'x', limit: 0 }).expect(422);
    expect(low.body.detail[0]).toMatchObject({
      loc: ['body', 'limit'],
      type: 'greater_than_equal',
    });
    const many = await query({
      source: 'x',
      usernames: Array.from({ length: 11 }, (_, i) => `u${i}`),
    }).expect(422);
    expect(many.body.detail[0]).toMatchObject({ loc: ['body', 'usernames'], type: 'too_long' });
    const keywords = await query({
      source: 'x',
      keywords: Array.from({ length: 6 }, (_, i) => `k${i}`),
    }).expect(422);
    expect(keywords.body.detail[0]).toMatchObject({ loc: ['body', 'keywords'], type: 'too_long' });
    const long = await query({ source: 'x', keywords: ['ok', 'k'.repeat(141)] }).expect(422);
    expect(long.body.detail).toEqual([
      expect.objectContaining({ loc: ['body', 'keywords', 1], type: 'string_too_long' }),
    ]);
    // Counted composed, as a job label is: typed with combining accents, 140 characters is 140
    // (a Unicode audit: set_desirabilities took the label, on-demand and statistics refused it).
    const decomposed = `#${'e\u0301'.repeat(139)}`;
    await query({ source: 'x', keywords: [decomposed] }).expect(200);
    await query({ source: 'x', keywords: [`${decomposed}e`] }).expect(422);
    const label = (text: string) =>
      app.http
        .get(`/api/v1/get_bytes_by_label?label=${encodeURIComponent(text)}`)
        .set('X-API-Key', key);
    await label(decomposed).expect(200);
    await label(`${decomposed}e`).expect(422);
    const source = await query({ source: 'facebook' }).expect(422);
    expect(source.body.detail).toEqual([
      expect.objectContaining({ loc: ['body', 'source'], type: 'enum' }),
    ]);
  });

  // JSON.parse (like Python's json) reads 1e400 as Infinity: it was told "got a number with a
  // fractional part", which it has not; pydantic says finite_number.
  it.each(['1e400', '-1e400'])(
    'reports a limit of %s, past any double, as finite_number',
    async (limit) => {
      const response = await query(`{"source":"x","limit":${limit}}`).expect(422);
      expect(response.body.detail).toEqual([
        { loc: ['body', 'limit'], msg: 'Input should be a finite number', type: 'finite_number' },
      ]);
    },
  );

  // The DTOs' checks wrote `loc, type, msg, ctx`, a service's rule and a malformed body
  // `loc, msg, type`: one endpoint's 422s listed the same fields in two orders.
  it('lists every 422 item’s keys as loc, msg, type, ctx, whichever check refused it', async () => {
    const keysOf = async (body: unknown) =>
      ((await query(body).expect(422)).body.detail as object[]).map((item) => Object.keys(item));
    const withContext = ['loc', 'msg', 'type', 'ctx'];
    const plain = ['loc', 'msg', 'type'];
    expect(await keysOf({ source: 'x', limit: 1001 })).toEqual([withContext]);
    expect(await keysOf({ source: 'x', keywords: ['ok', 7], source_name: 'x' })).toEqual([
      plain,
      plain,
    ]);
    expect(await keysOf({ source: 'x', start_date: '2026-11-20', end_date: '2026-11-01' })).toEqual(
      [plain],
    );
    expect(await keysOf('{"source": x}')).toEqual([withContext]);
    expect(await keysOf('[1]')).toEqual([plain]);
  });

  // A field named twice counts by its last value, as Python's json reads it (docs/decisions.md,
  // "Errors").
  it('reads a body field named twice by its last value', async () => {
    const last = await query('{"source":"x","limit":1001,"source":"twitter","limit":1}').expect(
      422,
    );
    expect(last.body.detail).toEqual([expect.objectContaining({ loc: ['body', 'source'] })]);
    await query('{"source":"twitter","limit":1001,"source":"x","limit":1}').expect(200);
  });

  it('takes every bound itself: limit 1000, 10 usernames, 5 keywords of 140 characters', async () => {
    // No miner here: a query that passes validation is answered 200 with status "error".
    const response = await query({
      source: 'x',
      limit: 1000,
      usernames: Array.from({ length: 10 }, (_, i) => `u${i}`),
      keywords: Array.from({ length: 5 }, (_, i) => `${i}`.repeat(140)),
    }).expect(200);
    expect(response.body.status).toBe('error');
  });

  // A blank name or keyword asked for nothing, and the query answered everyone's posts; a name
  // that is no username (`@@elon`, `@ elon`) asked for an author no record has.
  it('refuses usernames that name nobody and blank keywords, each at its index', async () => {
    const response = await query({
      source: 'x',
      usernames: ['alice', '@', '  ', ' @ ', '@@', '@@elon', '@ elon', 'some-one'],
      keywords: ['ok', '   ', '\t'],
    }).expect(422);
    const nobody = {
      type: 'value_error',
      msg: 'Value error, must be an X handle: 1 to 50 letters, digits or _, after an optional @',
    };
    const blank = {
      type: 'string_too_short',
      msg: 'String should have at least 1 character',
      ctx: { min_length: 1 },
    };
    expect(response.body.detail).toEqual([
      ...[1, 2, 3, 4, 5, 6, 7].map((index) => ({ loc: ['body', 'usernames', index], ...nobody })),
      { loc: ['body', 'keywords', 1], ...blank },
      { loc: ['body', 'keywords', 2], ...blank },
    ]);
    // A Reddit username may hold `-`; `#` and `r/` are text: each asks for something.
    const reddit = { source: 'reddit', usernames: [' @some-one ', 'a'], keywords: ['#', 'r/'] };
    await query(reddit).expect(200);
    const refused = await query({ ...reddit, usernames: ['@ some-one'] }).expect(422);
    expect(refused.body.detail[0].msg).toBe(
      'Value error, must be a Reddit username: 1 to 50 letters, digits, _ or -, after an optional @',
    );
  });

  it('accepts keyword_mode `all` or `any` only, as written', async () => {
    for (const keyword_mode of ['some', 'ANY', 1, ['any']]) {
      const response = await query({ source: 'x', keywords: ['a'], keyword_mode }).expect(422);
      expect(response.body.detail).toEqual([
        {
          loc: ['body', 'keyword_mode'],
          msg: "Input should be 'all' or 'any'",
          type: 'enum',
          ctx: { expected: "'all' or 'any'" },
        },
      ]);
    }
  });

  it('forbids unknown fields', async () => {
    const response = await query({ source: 'x', limt: 5 }).expect(422);
    expect(response.body.detail).toEqual([
      { loc: ['body', 'limt'], msg: 'Extra inputs are not permitted', type: 'extra_forbidden' },
    ]);
  });

  // JSON may escape half a surrogate pair (`"\ud800"`), and a 422 naming such a field repeated
  // it: strict parsers (Rust's serde_json, Go's) refuse the whole answer, the one telling the
  // client what is wrong (a Unicode audit). Named with U+FFFD in its place, as a decoder does.
  it('names an unknown field holding half a surrogate pair with U+FFFD in its place', async () => {
    const response = await query('{"source":"x","a\\ud800b":1}').expect(422);
    expect(response.text).not.toMatch(/\\ud[89ab]/i);
    expect(response.body.detail).toEqual([
      { loc: ['body', 'a\ufffdb'], msg: 'Extra inputs are not permitted', type: 'extra_forbidden' },
    ]);
  });

  it('answers malformed JSON with `json_invalid`', async () => {
    const response = await app.http
      .post('/api/v1/on_demand_data_request')
      .set('X-API-Key', key)
      .set('Content-Type', 'application/json')
      .send('{"source": "x",')
      .expect(422);
    expect(response.body.detail).toEqual([
      expect.objectContaining({
        type: 'json_invalid',
        msg: 'JSON decode error',
        loc: ['body', expect.any(Number)],
      }),
    ]);
  });

  it('answers a body that is not an object with one error at `body`', async () => {
    const response = await query([1, 2]).expect(422);
    expect(response.body.detail).toEqual([
      expect.objectContaining({ loc: ['body'], type: 'model_attributes_type' }),
    ]);
  });

  // FastAPI's rule for which bodies are JSON: none named, or application/json or */*+json.
  it.each([
    ['no Content-Type', undefined],
    ['application/vnd.api+json', 'application/vnd.api+json'],
    ['APPLICATION/JSON; charset=utf-8', 'APPLICATION/JSON; charset=utf-8'],
  ])('reads a body with %s as JSON', async (_name, contentType) => {
    // A byte array: fetch names no Content-Type for it unless told.
    const response = await checkedFetch(app.contract, `${app.url}/api/v1/on_demand_data_request`, {
      method: 'POST',
      headers: { 'X-API-Key': key, ...(contentType ? { 'Content-Type': contentType } : {}) },
      body: new TextEncoder().encode('{"source": "x", "limit": 0}'),
    });
    expect(response.status).toBe(422);
    expect(((await response.json()) as { detail: unknown }).detail).toEqual([
      expect.objectContaining({ loc: ['body', 'limit'], type: 'greater_than_equal' }),
    ]);
  });

  // curl -d without -H 'Content-Type: application/json' sends a form: the body is there, but
  // it is not JSON; FastAPI validates its bytes and answers `model_attributes_type`.
  it.each([
    ['/api/v1/on_demand_data_request', 'application/x-www-form-urlencoded'],
    ['/api/v1/on_demand_data_request', 'text/plain'],
    ['/api/v1/set_desirabilities', 'application/x-www-form-urlencoded'],
    ['/api/v1/keys', 'text/plain; charset=utf-8'],
  ])('answers a %s body sent as %s with model_attributes_type', async (path, contentType) => {
    const response = await app.http
      .post(path)
      .set('X-API-Key', TEST_MASTER_KEY)
      .set('Content-Type', contentType)
      .send('{"source": "x", "keywords": ["#bitcoin"]}')
      .expect(422);
    expect(response.body).toEqual({
      detail: [
        {
          loc: ['body'],
          msg: 'Input should be a valid dictionary or object to extract fields from',
          type: 'model_attributes_type',
        },
      ],
      request_id: response.headers['x-request-id'],
    });
  });

  it.each(['text/plain', 'application/json'])(
    'answers an empty %s body as missing',
    async (type) => {
      const response = await app.http
        .post('/api/v1/on_demand_data_request')
        .set('X-API-Key', key)
        .set('Content-Type', type)
        .send('')
        .expect(422);
      expect(response.body.detail).toEqual([
        { loc: ['body'], msg: 'Field required', type: 'missing' },
      ]);
    },
  );

  it('answers an oversized body with 413', async () => {
    const response = await query({ source: 'x', keywords: ['k'.repeat(2 * 1024 * 1024)] }).expect(
      413,
    );
    expect(response.body).toEqual({
      detail: 'Request body too large',
      request_id: response.headers['x-request-id'],
    });
  });

  // `+` in a query string is a space; %2B is the plus sign.
  it.each([
    ['/api/v1/tasks?limit=0x10', 'limit'],
    ['/api/v1/tasks?limit=1e2', 'limit'],
    ['/api/v1/tasks?limit=%2B5', 'limit'],
    ['/api/v1/tasks?limit=+5', 'limit'],
    ['/api/v1/tasks?limit=%205', 'limit'],
    ['/api/v1/tasks?limit=5%20', 'limit'],
    ['/api/v1/tasks?limit=', 'limit'],
    ['/api/v1/tasks?limit=1.5', 'limit'],
    ['/api/v1/tasks?limit=5.0', 'limit'],
    ['/api/v1/tasks?offset=9007199254740993', 'offset'],
    ['/api/v1/tasks?offset=Infinity', 'offset'],
    ['/api/v1/query_bucket/x?start_bucket=1e5', 'start_bucket'],
    ['/api/v1/query_bucket/x?end_bucket=0b11', 'end_bucket'],
    ['/api/v1/get_desirabilities?limit=1e2', 'limit'],
    ['/api/v1/get_desirabilities?offset=0x1', 'offset'],
    ['/api/v1/miners?uid=1e1', 'uid'],
    ['/api/v1/miners?uid=--1', 'uid'],
  ])('refuses %s as int_parsing: integers are decimal digits', async (path, field) => {
    const response = await app.http.get(path).set('X-API-Key', TEST_MASTER_KEY).expect(422);
    expect(response.body).toEqual({
      detail: [
        {
          loc: ['query', field],
          msg: 'Input should be a valid integer, unable to parse string as an integer',
          type: 'int_parsing',
        },
      ],
      request_id: response.headers['x-request-id'],
    });
  });

  it('reads decimal digits with a minus sign or leading zeros as the integer', async () => {
    await app.http.get('/api/v1/tasks?limit=007&offset=0').set('X-API-Key', key).expect(200);
    const negative = await app.http
      .get('/api/v1/miners?uid=-1')
      .set('X-API-Key', TEST_MASTER_KEY)
      .expect(422);
    expect(negative.body.detail).toEqual([
      expect.objectContaining({ loc: ['query', 'uid'], type: 'greater_than_equal' }),
    ]);
    const large = await app.http
      .get('/api/v1/tasks?offset=9007199254740991')
      .set('X-API-Key', key)
      .expect(422);
    expect(large.body.detail).toEqual([
      expect.objectContaining({ loc: ['query', 'offset'], type: 'less_than_equal' }),
    ]);
  });

  it('validates query and path parameters with `query`/`path` locations', async () => {
    const bucket = await app.http
      .get('/api/v1/query_bucket/x?start_bucket=abc')
      .set('X-API-Key', key)
      .expect(422);
    expect(bucket.body.detail).toEqual([
      expect.objectContaining({ loc: ['query', 'start_bucket'], type: 'int_parsing' }),
    ]);
    const source = await app.http
      .get('/api/v1/get_top_labels_by_source/facebook')
      .set('X-API-Key', key)
      .expect(422);
    expect(source.body.detail).toEqual([
      expect.objectContaining({ loc: ['path', 'source'], type: 'enum' }),
    ]);
    const missing = await app.http.get('/api/v1/ages').set('X-API-Key', key).expect(422);
    expect(missing.body.detail).toEqual([
      { loc: ['query', 'source'], msg: 'Field required', type: 'missing' },
    ]);
  });

  // FastAPI lists every location's errors in one 422, path, query, header then body: Nest ran
  // each parameter's pipe on its own and the first refusal answered, so a request bad in its
  // path and its query was told of one of the two (a review's finding on query_bucket;
  // docs/decisions.md, "Errors").
  it('lists the errors of the path, the query and the headers in one 422, in that order', async () => {
    const tooLong = `"${'a'.repeat(1023)}"`;
    const headerTooLong = {
      loc: ['header', 'if-none-match'],
      msg: 'String should have at most 1024 characters',
      type: 'string_too_long',
      ctx: { max_length: 1024 },
    };
    const pathAndQuery = await app.http
      .get('/api/v1/query_bucket/facebook?start_bucket=abc')
      .set('X-API-Key', key)
      .expect(422);
    expect(pathAndQuery.body).toEqual({
      detail: [
        expect.objectContaining({ loc: ['path', 'source'], type: 'enum' }),
        expect.objectContaining({ loc: ['query', 'start_bucket'], type: 'int_parsing' }),
      ],
      request_id: pathAndQuery.headers['x-request-id'],
    });
    // The same list, in the same order, whichever parameter's check ends first.
    for (let attempt = 0; attempt < 5; attempt += 1) {
      const bucket = await app.http
        .get('/api/v1/query_bucket/facebook?start_bucket=abc&label=%20')
        .set('X-API-Key', key)
        .set('If-None-Match', tooLong)
        .expect(422);
      expect(bucket.body.detail).toEqual([
        expect.objectContaining({ loc: ['path', 'source'], type: 'enum' }),
        expect.objectContaining({ loc: ['query', 'label'], type: 'string_too_short' }),
        expect.objectContaining({ loc: ['query', 'start_bucket'], type: 'int_parsing' }),
        headerTooLong,
      ]);
    }
    const pathAndHeader = await app.http
      .get('/api/v1/get_top_labels_by_source/facebook')
      .set('X-API-Key', key)
      .set('If-None-Match', tooLong)
      .expect(422);
    expect(pathAndHeader.body.detail).toEqual([
      expect.objectContaining({ loc: ['path', 'source'], type: 'enum' }),
      headerTooLong,
    ]);
    const ages = await app.http
      .get('/api/v1/ages?source=tiktok')
      .set('X-API-Key', key)
      .set('If-None-Match', tooLong)
      .expect(422);
    expect(ages.body.detail).toEqual([
      expect.objectContaining({ loc: ['query', 'source'], type: 'enum' }),
      headerTooLong,
    ]);
    const bytes = await app.http
      .get('/api/v1/get_bytes_by_label')
      .set('X-API-Key', key)
      .set('If-None-Match', tooLong)
      .expect(422);
    expect(bytes.body.detail).toEqual([
      { loc: ['query', 'label'], msg: 'Field required', type: 'missing' },
      headerTooLong,
    ]);
    // One location refused, the others valid: its errors alone, as before.
    const queryAlone = await app.http
      .get('/api/v1/query_bucket/x?start_bucket=abc')
      .set('X-API-Key', key)
      .set('If-None-Match', '"a"')
      .expect(422);
    expect(queryAlone.body.detail).toEqual([
      expect.objectContaining({ loc: ['query', 'start_bucket'], type: 'int_parsing' }),
    ]);
    const headerAlone = await app.http
      .get('/api/v1/query_bucket/x')
      .set('X-API-Key', key)
      .set('If-None-Match', tooLong)
      .expect(422);
    expect(headerAlone.body.detail).toEqual([headerTooLong]);
  });

  it("answers unknown routes with FastAPI's 404 body", async () => {
    const response = await app.http.get('/api/v1/nope').set('X-API-Key', key).expect(404);
    expect(response.body).toEqual({
      detail: 'Not Found',
      request_id: response.headers['x-request-id'],
    });
  });

  // Starlette matches paths case-sensitively: another spelling is no route, whatever the method.
  it.each([
    ['get', '/API/V1/HEALTH'],
    ['get', '/Api/v1/health'],
    ['post', '/API/V1/TASKS/some-task/'],
    ['get', '/DOCS'],
    ['get', '/OpenAPI.json'],
  ] as const)("answers %s %s, a path in another case, with FastAPI's 404", async (method, path) => {
    const response = await app.http[method](path).set('X-API-Key', key).expect(404);
    expect(response.headers.allow).toBeUndefined();
    expect(response.body).toEqual({
      detail: 'Not Found',
      request_id: response.headers['x-request-id'],
    });
  });

  it.each([
    ['delete', '/api/v1/health', 'GET, HEAD'],
    ['put', '/api/v1/keys', 'GET, HEAD, POST'],
    ['get', '/api/v1/on_demand_data_request', 'POST'],
    ['post', '/api/v1/tasks/some-task/', 'GET, HEAD'],
    ['options', '/api/v1/keys/3f1c/deactivate', 'POST'],
  ] as const)(
    "answers %s %s, a path with other methods, with FastAPI's 405 and Allow",
    async (method, path, allow) => {
      const response = await app.http[method](path).expect(405);
      expect(response.headers.allow).toBe(allow);
      expect(response.body).toEqual({
        detail: 'Method Not Allowed',
        request_id: response.headers['x-request-id'],
      });
    },
  );

  it('rejects an unparsable date and a start after the end on the right field', async () => {
    const unparsable = await query({ source: 'x', start_date: 'yesterday' }).expect(422);
    expect(unparsable.body.detail).toEqual([
      expect.objectContaining({ loc: ['body', 'start_date'], type: 'value_error' }),
    ]);
    // Past year 9999 in UTC, which RFC 3339 (and the miners' Python) cannot write.
    for (const field of ['start_date', 'end_date']) {
      const far = await query({ source: 'x', [field]: '9999-12-31T23:59:59-23:59' }).expect(422);
      expect(far.body.detail).toEqual([
        {
          loc: ['body', field],
          msg: 'Value error, must not be later than 9999-12-31T23:59:59.999999Z once in UTC',
          type: 'value_error',
        },
      ]);
    }
    // Before 0001 in UTC, which Python's datetime (the miners', the original's) cannot hold.
    for (const [field, value] of [
      ['start_date', '0000-12-31'],
      ['end_date', '0001-01-01T00:00:00+00:01'],
    ]) {
      const early = await query({ source: 'x', [field]: value }).expect(422);
      expect(early.body.detail).toEqual([
        {
          loc: ['body', field],
          msg: 'Value error, must not be earlier than 0001-01-01T00:00:00Z once in UTC',
          type: 'value_error',
        },
      ]);
    }
    const reversed = await query({
      source: 'x',
      start_date: '2026-11-20',
      end_date: '2026-11-01T00:00:00Z',
    }).expect(422);
    expect(reversed.body.detail).toEqual([
      {
        loc: ['body', 'start_date'],
        msg: 'Value error, start_date must not be after end_date',
        type: 'value_error',
      },
    ]);
    // Up to 9 fraction digits are read, and compared: cut to the millisecond, this start was
    // its end and passed, as did one half a millisecond past a date-only end's 23:59:59.999.
    for (const [start_date, end_date] of [
      ['2026-12-01T10:00:00.0000001Z', '2026-12-01T10:00:00Z'],
      ['2026-12-01T23:59:59.9995Z', '2026-12-01'],
    ]) {
      const subMillisecond = await query({ source: 'x', start_date, end_date }).expect(422);
      expect(subMillisecond.body.detail).toEqual([
        {
          loc: ['body', 'start_date'],
          msg: 'Value error, start_date must not be after end_date',
          type: 'value_error',
        },
      ]);
    }
    // With end_date too: a range in the future holds nothing, and was asked of miners.
    const ahead = await query({ source: 'x', start_date: '9998-01-01', end_date: '9998-02-01' });
    expect(ahead.status).toBe(422);
    expect(ahead.body.detail).toEqual([
      {
        loc: ['body', 'start_date'],
        msg: 'Value error, start_date must not be after now',
        type: 'value_error',
      },
    ]);
    // Without end_date the range ends now: the message names no end_date the client did not send.
    const future = await query({ source: 'x', start_date: '9999-01-01T00:00:00Z' }).expect(422);
    expect(future.body.detail).toEqual([
      {
        loc: ['body', 'start_date'],
        msg: 'Value error, start_date must not be after now (the end of a query without end_date)',
        type: 'value_error',
      },
    ]);
  });

  // ISO 8601 week, basic and ordinal dates: the service reads a subset of ISO 8601
  // (docs/decisions.md, "Dates"), and the refusal said "must be an ISO 8601 date or date-time",
  // false of these.
  it.each([
    ['start_date', '2026-W47'],
    ['end_date', '20261120'],
    ['start_date', '2026-324'],
  ])('tells an on-demand %s of %s which forms a date takes', async (field, value) => {
    const response = await query({ source: 'x', [field]: value }).expect(422);
    expect(response.body.detail).toEqual([
      {
        loc: ['body', field],
        msg:
          'Value error, must be a date (YYYY-MM-DD) or a date-time (YYYY-MM-DDTHH:MM[:SS[.fraction]], ' +
          'T or a space between date and time, up to 9 fraction digits), with an optional zone (Z, ±HH, ±HHMM or ±HH:MM; none is UTC), ' +
          'e.g. 2026-11-20 or 2026-11-20T12:00:00Z',
        type: 'value_error',
      },
    ]);
  });

  // The range's check (against now without end_date) ran in the service, after the DTO's: a
  // limit over 1000 hid a start_date in the future until the client had fixed it (an audit's).
  it('lists a start_date in the future and a bad limit in one 422, in the schema order', async () => {
    const both = await query({ source: 'x', limit: 5000, start_date: '9999-01-01' }).expect(422);
    expect(both.body.detail).toEqual([
      {
        loc: ['body', 'start_date'],
        msg: 'Value error, start_date must not be after now (the end of a query without end_date)',
        type: 'value_error',
      },
      {
        loc: ['body', 'limit'],
        msg: 'Input should be less than or equal to 1000',
        type: 'less_than_equal',
        ctx: { le: 1000 },
      },
    ]);
    const reversed = await query({
      source: 'x',
      keywords: [' '],
      start_date: '2026-11-20',
      end_date: '2026-11-01',
    }).expect(422);
    expect(reversed.body.detail).toEqual([
      expect.objectContaining({ loc: ['body', 'keywords', 0], type: 'string_too_short' }),
      expect.objectContaining({ loc: ['body', 'start_date'], type: 'value_error' }),
    ]);
    // Compared with an end_date only once that is a date: its own error says what is wrong.
    const badEnd = await query({ source: 'x', start_date: '2026-11-20', end_date: 'soon' }).expect(
      422,
    );
    expect(badEnd.body.detail).toEqual([
      expect.objectContaining({ loc: ['body', 'end_date'], type: 'value_error' }),
    ]);
  });

  it('gives every response a request id, honouring one sent by the client', async () => {
    const response = await app.http
      .get('/api/v1/health')
      .set('X-API-Key', key)
      .set('X-Request-Id', 'lb-1234')
      .expect(200);
    expect(response.headers['x-request-id']).toBe('lb-1234');
    const generated = await app.http.get('/api/v1/health').set('X-API-Key', key).expect(200);
    expect(generated.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('puts the X-Request-Id in every error body, whoever raised the error', async () => {
    const responses = [
      await app.http.get('/api/v1/health').expect(401),
      await app.http.get('/api/v1/health').set('X-API-Key', 'sk_live_nope').expect(401),
      await app.http.get('/api/v1/keys').set('X-API-Key', key).expect(403),
      await app.http.get('/api/v1/nope').set('X-API-Key', key).expect(404),
      await query({ source: 'x', limit: 0 }).expect(422),
      await app.http
        .post('/api/v1/on_demand_data_request')
        .set('X-API-Key', key)
        .set('Content-Type', 'application/json')
        .send('{"source"')
        .expect(422),
      await app.http
        .post('/api/v1/on_demand_data_request')
        .set('X-API-Key', key)
        .set('X-Request-Id', 'lb-413')
        .set('Content-Type', 'application/json')
        .send(JSON.stringify({ source: 'x', keywords: ['k'.repeat(2 * 1024 * 1024)] }))
        .expect(413),
    ];
    for (const response of responses) {
      expect(response.headers['x-request-id']).toEqual(expect.any(String));
      expect(response.body.request_id).toBe(response.headers['x-request-id']);
      expect(Object.keys(response.body).sort()).toEqual(['detail', 'request_id']);
    }
    expect(responses.at(-1)!.body.request_id).toBe('lb-413');
  });
});

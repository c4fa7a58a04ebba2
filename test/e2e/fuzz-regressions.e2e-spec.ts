import { checkedFetch } from '../support/contract';
import { registerTask } from '../support/tasks';
import { startTestApp, TEST_MASTER_KEY, TestApp } from '../support/test-app';

/** How text Postgres cannot store (U+0000, an unpaired surrogate) is refused, wherever it comes. */
const UNSTORABLE = {
  type: 'string_pattern_mismatch',
  msg: "String should match pattern '^[^\\x00\\ud800-\\udfff]*$'",
  ctx: { pattern: '^[^\\x00\\ud800-\\udfff]*$' },
};

/** Defects the fuzzer (fuzz.e2e-spec.ts, npm run bench:fuzz) found, each pinned down here. */
describe('fuzz findings', () => {
  let app: TestApp;

  beforeAll(async () => {
    app = await startTestApp({ LOG_LEVEL: 'error' });
  });

  afterAll(async () => {
    await app?.close();
  });

  const post = (path: string, body: string, contentType = 'application/json') =>
    app.http
      .post(path)
      .set('X-API-Key', TEST_MASTER_KEY)
      .set('Content-Type', contentType)
      .send(body);

  it('refuses a body nested thousands of levels deep as json_invalid, not a stack overflow', async () => {
    const deep = `${'{"a":'.repeat(5000)}null${'}'.repeat(5000)}`;
    const response = await post('/api/v1/on_demand_data_request', `{"source":"x","extra":${deep}}`);
    expect(response.status).toBe(422);
    // At the `{` that opens the 65th level: 22 characters, then 63 of `{"a":`.
    expect(response.body.detail[0]).toMatchObject({ type: 'json_invalid', loc: ['body', 337] });
    expect(response.headers['x-request-id']).toBeTruthy();
  });

  it('refuses a NUL character in a key name, a hotkey and a label with a 422 on the field', async () => {
    const key = await post('/api/v1/keys', JSON.stringify({ name: 'a\u0000b' }));
    expect(key.status).toBe(422);
    expect(key.body.detail).toEqual([{ loc: ['body', 'name'], ...UNSTORABLE }]);
    const vote = await app.http
      .get('/api/v1/get_desirabilities?hotkey=5F%00x')
      .set('X-API-Key', TEST_MASTER_KEY);
    expect(vote.status).toBe(422);
    expect(vote.body.detail).toEqual([{ loc: ['query', 'hotkey'], ...UNSTORABLE }]);
    for (const path of [
      '/api/v1/get_bytes_by_label?label=%00',
      '/api/v1/query_bucket/x?label=a%00',
    ]) {
      const stats = await app.http.get(path).set('X-API-Key', TEST_MASTER_KEY);
      expect(stats.status).toBe(422);
      expect(stats.body.detail).toEqual([{ loc: ['query', 'label'], ...UNSTORABLE }]);
    }
  });

  it("refuses NUL and unpaired surrogates in an on-demand query's usernames and keywords", async () => {
    // Answered from stored data they reached Postgres as query parameters: a 500 (an audit's).
    const response = await post(
      '/api/v1/on_demand_data_request',
      JSON.stringify({ source: 'x', usernames: ['ok', 'a\u0000'], keywords: ['k\ud800', '#b'] }),
    );
    expect(response.status).toBe(422);
    expect(response.body.detail).toEqual(
      [
        ['body', 'usernames', 1],
        ['body', 'keywords', 0],
      ].map((loc) => ({ loc, ...UNSTORABLE })),
    );
  });

  it('refuses an unpaired surrogate in a key name as it refuses NUL (it was stored as U+FFFD)', async () => {
    for (const name of ['x\ud800y', 'x\udc00', '\ud83d']) {
      const created = await post('/api/v1/keys', JSON.stringify({ name }));
      expect(created.status).toBe(422);
      expect(created.body.detail).toEqual([{ loc: ['body', 'name'], ...UNSTORABLE }]);
    }
    const paired = await post('/api/v1/keys', JSON.stringify({ name: 'x\ud83d\ude00' }));
    expect(paired.status).toBe(200);
    expect(paired.body.name).toBe('x😀');
    const renamed = await app.http
      .patch(`/api/v1/keys/${paired.body.id}`)
      .set('X-API-Key', TEST_MASTER_KEY)
      .send({ name: 'y\ud800' });
    expect(renamed.status).toBe(422);
    expect(renamed.body.detail).toEqual([{ loc: ['body', 'name'], ...UNSTORABLE }]);
  });

  it('refuses integers beyond what Postgres holds with a 422, not a 500', async () => {
    for (const [path, field] of [
      ['/api/v1/tasks?offset=1e300', 'offset'],
      ['/api/v1/query_bucket/x?end_bucket=1e300', 'end_bucket'],
      ['/api/v1/query_bucket/x?start_bucket=-1e97', 'start_bucket'],
    ]) {
      const response = await app.http.get(path).set('X-API-Key', TEST_MASTER_KEY);
      expect(response.status).toBe(422);
      expect(response.body.detail[0].loc).toEqual(['query', field]);
    }
  });

  it('answers 404 for a task id holding a NUL character', async () => {
    for (const path of ['/api/v1/tasks/a%00b', '/api/v1/tasks/a%00b/dataset']) {
      const response = await app.http.get(path).set('X-API-Key', TEST_MASTER_KEY);
      expect(response.status).toBe(404);
    }
  });

  // An outside consumer's audit: the 404 quoted `%00` as U+0000 itself, which a client showing
  // the detail prints raw (a terminal takes ESC as the start of a command).
  it.each([
    ['%00', '\\u0000'],
    ['a%00b', 'a\\u0000b'],
    ['%1B%5B31mred', '\\u001b[31mred'],
    ['line%0Abreak%09tab%7F', 'line\\u000abreak\\u0009tab\\u007f'],
    ['%C2%85%E2%80%A8%E2%80%A9', '\\u0085\\u2028\\u2029'],
    // A fuzz audit's finding: format characters were quoted as they are, U+202E reversing the
    // rest of the line, U+200B hiding in `tao-x`.
    ['%E2%80%AEabc', '\\u202eabc'],
    ['tao-x%E2%80%8B', 'tao-x\\u200b'],
    ['%EF%BB%BF%E2%81%A6%E2%80%8D', '\\ufeff\\u2066\\u200d'],
    ['a%F3%A0%81%81', 'a\\udb40\\udc41'],
  ])(
    'quotes the unknown task id %s in its 404 without its control or format characters',
    async (id, quoted) => {
      const answers = [
        await app.http.get(`/api/v1/tasks/${id}`).set('X-API-Key', TEST_MASTER_KEY),
        await app.http.get(`/api/v1/tasks/${id}/dataset`).set('X-API-Key', TEST_MASTER_KEY),
        await post(`/api/v1/tasks/${id}/recompile`, ''),
      ];
      for (const answer of answers) {
        expect(answer.status).toBe(404);
        expect(answer.body.detail).toBe(`Task '${quoted}' not found`);
        expect(answer.body.detail).not.toMatch(/[\p{Cc}\p{Cf}\u2028\u2029]/u);
      }
    },
  );

  it('refuses format characters in a task id and in a key name with a 422 at the field', async () => {
    const vote = await post(
      '/api/v1/set_desirabilities',
      JSON.stringify({
        desirabilities: [{ id: '\u202eabc', weight: 1, params: { platform: 'x', label: '#a' } }],
      }),
    );
    expect(vote.status).toBe(422);
    expect(vote.body.detail).toEqual([
      {
        loc: ['body', 'desirabilities', 0, 'id'],
        msg: 'Value error, id must be printable: no format characters (bidi controls, zero-width characters, …)',
        type: 'value_error',
      },
    ]);
    const key = await post('/api/v1/keys', JSON.stringify({ name: 'joined 👩\u200d💻' }));
    expect(key.status).toBe(200);
    const renamed = await app.http
      .patch(`/api/v1/keys/${key.body.id}`)
      .set('X-API-Key', TEST_MASTER_KEY)
      .send({ name: '\u202eabc' });
    expect(renamed.status).toBe(422);
    expect(renamed.body.detail).toEqual([
      {
        loc: ['body', 'name'],
        msg:
          'Value error, name must be printable: no control characters (CR, LF, TAB, …), bidi ' +
          'controls or invisible format characters (zero-width space, …)',
        type: 'value_error',
      },
    ]);
  });

  // Registered before parseId refused format characters: still read by its id, as it is.
  it('answers a task stored with a format character in its id, as it is', async () => {
    const id = 'stored-\u202eabc\u200b';
    await registerTask(app.app, '5ValidatorHotkeyForFormatIds', id, '#formatids');
    const task = await app.http
      .get(`/api/v1/tasks/${encodeURIComponent(id)}`)
      .set('X-API-Key', TEST_MASTER_KEY);
    expect(task.status).toBe(200);
    expect(task.body.id).toBe(id);
  });

  // Quoted in a 404 before, its control and format characters escaped; no address holds them.
  it('refuses a hotkey with control or format characters as no address', async () => {
    const response = await app.http
      .get('/api/v1/get_desirabilities?hotkey=%E2%80%AE5F%1B%5B31m')
      .set('X-API-Key', TEST_MASTER_KEY);
    expect(response.status).toBe(422);
    expect(response.body.detail).toEqual([
      expect.objectContaining({ loc: ['query', 'hotkey'], type: 'value_error' }),
    ]);
  });

  it('refuses NUL characters in a submission with a 422, storing nothing', async () => {
    const response = await post(
      '/api/v1/set_desirabilities',
      JSON.stringify({
        desirabilities: [
          { id: 'a\u0000b', weight: 1, params: { platform: 'x', label: '#a', keyword: 'k\u0000' } },
          { source_name: 'x', label_weights: { '#b\u0000': 1 } },
        ],
      }),
    );
    expect(response.status).toBe(422);
    expect(response.body.detail).toEqual(
      [
        ['body', 'desirabilities', 0, 'id'],
        ['body', 'desirabilities', 0, 'params', 'keyword'],
        ['body', 'desirabilities', 1, 'label_weights', '#b\u0000', '[key]'],
      ].map((loc) => ({ loc, ...UNSTORABLE })),
    );
  });

  it('refuses unpaired surrogates in a submission as it refuses NUL', async () => {
    const response = await post(
      '/api/v1/set_desirabilities',
      JSON.stringify({
        desirabilities: [
          { id: 'a\ud800', weight: 1, params: { platform: 'x', label: '#a', keyword: 'k\udfff' } },
        ],
      }),
    );
    expect(response.status).toBe(422);
    expect(response.body.detail).toEqual(
      [
        ['body', 'desirabilities', 0, 'id'],
        ['body', 'desirabilities', 0, 'params', 'keyword'],
      ].map((loc) => ({ loc, ...UNSTORABLE })),
    );
  });

  it('routes a path with a broken percent-encoding like any unknown id (FastAPI decodes leniently)', async () => {
    for (const id of ['%zz', '%E0%A4%A', '%ED%A0%80', '%']) {
      const task = await app.http.get(`/api/v1/tasks/${id}`).set('X-API-Key', TEST_MASTER_KEY);
      expect(task.status).toBe(404);
      expect(typeof task.body.detail).toBe('string');
    }
    const source = await app.http
      .get('/api/v1/get_top_labels_by_source/%E0%A4%A')
      .set('X-API-Key', TEST_MASTER_KEY);
    expect(source.status).toBe(422);
    expect(source.body.detail[0].loc).toEqual(['path', 'source']);
  });

  // Only POST, PUT and PATCH bodies are read, so only theirs get a 413 (as the README says).
  it('ignores the body of a GET, malformed or over BODY_LIMIT, as FastAPI does for operations without one', async () => {
    for (const body of ['{not json', `"${'x'.repeat(1_100_000)}"`]) {
      const response = await app.http
        .get('/api/v1/health')
        .set('X-API-Key', TEST_MASTER_KEY)
        .set('Content-Type', 'application/json')
        .send(body);
      expect(response.status).toBe(200);
    }
  });

  it('refuses a compressed body with a documented 415 and a request id', async () => {
    const response = await app.http
      .post('/api/v1/keys')
      .set('X-API-Key', TEST_MASTER_KEY)
      .set('Content-Type', 'application/json')
      .set('Content-Encoding', 'gzip')
      .send('not gzip at all');
    expect(response.status).toBe(415);
    expect(response.body).toMatchObject({ detail: expect.any(String) });
    expect(response.headers['x-request-id']).toBeTruthy();
  });

  it('answers a prototype-pollution shaped field with a 422 on the field', async () => {
    // It was a 422 about the whole body (class-transformer threw on the field's `constructor`).
    for (const field of ['{"constructor":{"prototype":{"polluted":true}}}', '{"__proto__":{}}']) {
      const response = await post('/api/v1/keys', `{"name":${field}}`);
      expect(response.status).toBe(422);
      expect(response.body.detail).toEqual([
        { loc: ['body', 'name'], msg: 'Input should be a valid string', type: 'string_type' },
      ]);
    }
  });

  it.each(['utf-16', 'utf-16le', 'UTF-32', 'latin1', 'iso-8859-1'])(
    'refuses charset=%s with a 415, whatever the body',
    async (charset) => {
      const response = await post(
        '/api/v1/keys',
        JSON.stringify({ name: 'x' }),
        `application/json; charset=${charset}`,
      );
      expect(response.status).toBe(415);
      expect(response.body).toMatchObject({ detail: 'Unsupported request body encoding' });
    },
  );

  it('refuses a real UTF-16 body, and bytes that are not UTF-8, with a 415', async () => {
    // fetch sends the bytes as they are (supertest would serialize a Buffer as JSON).
    const raw = (body: Buffer) =>
      checkedFetch(app.contract, `${app.url}/api/v1/keys`, {
        method: 'POST',
        headers: { 'X-API-Key': TEST_MASTER_KEY, 'Content-Type': 'application/json' },
        body,
      });
    const utf16 = await raw(Buffer.from(JSON.stringify({ name: 'x' }), 'utf16le'));
    expect(utf16.status).toBe(415);
    const latin1 = await raw(Buffer.from('{"name": "caf\xe9"}', 'latin1'));
    expect(latin1.status).toBe(415);
    // UTF-8 stated or implied is fine.
    const utf8 = await post(
      '/api/v1/keys',
      JSON.stringify({ name: 'café' }),
      'application/json; charset=UTF-8',
    );
    expect(utf8.status).toBe(200);
  });

  it('reports a `null` body as missing, and another JSON value as the wrong type, not bad JSON', async () => {
    const missing = await post('/api/v1/on_demand_data_request', 'null');
    expect(missing.status).toBe(422);
    expect(missing.body.detail).toEqual([
      { loc: ['body'], msg: 'Field required', type: 'missing' },
    ]);
    const vote = await post('/api/v1/set_desirabilities', 'null');
    expect(vote.body.detail).toEqual([{ loc: ['body'], msg: 'Field required', type: 'missing' }]);
    const number = await post('/api/v1/keys', '42');
    expect(number.status).toBe(422);
    expect(number.body.detail[0]).toMatchObject({ loc: ['body'], type: 'model_attributes_type' });
  });

  it.each(['toString', 'valueOf', 'constructor', 'hasOwnProperty', '__proto__'])(
    'refuses a body field named %s as extra_forbidden on POST /keys and on-demand',
    async (name) => {
      const key = await post('/api/v1/keys', `{"name": "members", "${name}": 1}`);
      expect(key.status).toBe(422);
      expect(key.body.detail).toEqual([
        { loc: ['body', name], msg: 'Extra inputs are not permitted', type: 'extra_forbidden' },
      ]);
      const query = await post('/api/v1/on_demand_data_request', `{"source": "x", "${name}": 1}`);
      expect(query.status).toBe(422);
      expect(query.body.detail).toContainEqual({
        loc: ['body', name],
        msg: 'Extra inputs are not permitted',
        type: 'extra_forbidden',
      });
    },
  );

  it.each([
    ['/api/v1/keys', { name: 'many fields' }],
    ['/api/v1/on_demand_data_request', { source: 'x' }],
    ['/api/v1/set_desirabilities', { desirabilities: [] }],
  ])(
    'lists 20 of 100,000 unknown body fields on POST %s and counts the rest',
    async (path, known) => {
      // A hostile-client review's: the pipe walked them for ~12 s and the 422 listed them all.
      // Names `_0`, `_1`, … `_255r` (base 36): the body stays under BODY_LIMIT's 1mb.
      const names = Array.from({ length: 100_000 }, (_, index) => `_${index.toString(36)}`);
      const body = JSON.stringify({
        ...known,
        ...Object.fromEntries(names.map((name) => [name, 0])),
      });
      const response = await post(path, body);
      expect(response.status).toBe(422);
      expect(response.body.detail).toEqual([
        ...names.slice(0, 20).map((name) => ({
          loc: ['body', name],
          msg: 'Extra inputs are not permitted',
          type: 'extra_forbidden',
        })),
        {
          loc: ['body'],
          msg: 'Extra inputs are not permitted: 99980 more unknown fields, not listed',
          type: 'extra_forbidden',
        },
      ]);
    },
    60_000,
  );
});

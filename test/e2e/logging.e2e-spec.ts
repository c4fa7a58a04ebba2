import { createHash } from 'node:crypto';
import { Clock } from '../../src/common/clock/clock';
import { createKey } from '../support/fixtures';
import { eventually, scrape } from '../support/metrics';
import { sample } from '../support/prometheus-text';
import { exchange, parse } from '../support/raw-http';
import { sendAndLeave, uploadSlowlyAndLeave } from '../support/send-and-leave';
import { startTestApp, TEST_MASTER_KEY, TestApp } from '../support/test-app';
import { LogCapture } from '../support/log-capture';
import { registerTask } from '../support/tasks';

type LogLine = {
  msg?: string;
  responseTime?: number;
  req?: { id?: string; url?: string; remoteAddress?: string };
  context?: string;
};

const METRICS_TOKEN = 'metrics-token-for-logging-tests-42';

describe('Structured logs', () => {
  const capture = new LogCapture();
  let app: TestApp;

  beforeAll(async () => {
    app = await startTestApp({ LOG_LEVEL: 'info', METRICS_TOKEN }, { logDestination: capture });
  });
  afterAll(() => app.close());

  /** The log line of a request's completion (pino-http), once it has been written. */
  const completionOf = (requestId: string) =>
    eventually(async () => {
      const line = capture
        .lines<LogLine>()
        .find((entry) => entry.req?.id === requestId && 'res' in entry);
      expect(line).toBeDefined();
      return Promise.resolve(line!);
    });

  it('honours an incoming X-Request-Id, echoes it and logs the request under it', async () => {
    const response = await app.http
      .get('/api/v1/health')
      .set('X-API-Key', TEST_MASTER_KEY)
      .set('X-Request-Id', 'lb-trace-0001')
      .expect(200);
    expect(response.headers['x-request-id']).toBe('lb-trace-0001');
    const line = await completionOf('lb-trace-0001');
    expect(line.msg).toMatch(/^GET \/api\/v1\/health 200 \d+ms$/);
  });

  it('names the key charged on its line (its id as listed, or master), never the key', async () => {
    const { key, id } = await createKey(app);
    const charged = await app.http.get('/api/v1/health').set('X-API-Key', key).expect(200);
    const line = await completionOf(charged.headers['x-request-id']);
    expect(line).toMatchObject({ key_id: id });
    expect(JSON.stringify(line)).not.toContain(key);
    const master = await app.http
      .get('/api/v1/health')
      .set('X-API-Key', TEST_MASTER_KEY)
      .expect(200);
    expect(await completionOf(master.headers['x-request-id'])).toMatchObject({ key_id: 'master' });
    const refused = await app.http
      .get('/api/v1/health')
      .set('X-API-Key', 'sk_live_no-such-key')
      .expect(401);
    expect(await completionOf(refused.headers['x-request-id'])).not.toHaveProperty('key_id');
  });

  // Which keys downloaded a dataset holding an erased author's rows (README, "Personal data"):
  // the URL's task id is `[redacted]` from 15 characters, so the line names it (an audit's
  // finding). Only for a task found: an id no task has may be any text a client sent.
  it("names a dataset download's task and format on its line, once the task is found", async () => {
    const id = `logged-download-${Date.now()}`;
    await registerTask(app.app, '5ValidatorHotkeyForLogging', id, '#bitcoin');
    const active = await app.http
      .get(`/api/v1/tasks/${id}/dataset?format=parquet`)
      .set('X-API-Key', TEST_MASTER_KEY)
      .expect(409);
    const line = await completionOf(active.headers['x-request-id']);
    expect(line).toMatchObject({ task_id: id, format: 'parquet', key_id: 'master' });
    expect(line.msg).toBe(
      `GET /api/v1/tasks/[redacted]/dataset?format=parquet 409 ${line.responseTime}ms`,
    );
    const unknown = await app.http
      .get('/api/v1/tasks/no-such-task-logged/dataset')
      .set('X-API-Key', TEST_MASTER_KEY)
      .expect(404);
    expect(await completionOf(unknown.headers['x-request-id'])).not.toHaveProperty('task_id');
  });

  it('generates a request id when none (or a malformed one) is sent', async () => {
    const response = await app.http
      .get('/api/v1/health')
      .set('X-API-Key', TEST_MASTER_KEY)
      .set('X-Request-Id', 'not a sane id; drop table')
      .expect(200);
    const id = response.headers['x-request-id'];
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    await completionOf(id);
  });

  it('gives a request rejected by the body parser a request id and a log line too', async () => {
    const response = await app.http
      .post('/api/v1/keys')
      .set('X-API-Key', TEST_MASTER_KEY)
      .set('Content-Type', 'application/json')
      .send('{"name": ')
      .expect(422);
    expect(response.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    const line = await completionOf(response.headers['x-request-id']);
    expect(line.msg).toMatch(/^POST \/api\/v1\/keys 422 \d+ms$/);
  });

  it('logs a request whose client left before the answer as such, and counts it apart', async () => {
    const id = 'client-gave-up-0001';
    // Half a body: the request waits for the rest, and the client closes instead.
    await sendAndLeave(
      Number(new URL(app.url).port),
      `POST /api/v1/keys HTTP/1.1\r\nHost: localhost\r\nX-API-Key: ${TEST_MASTER_KEY}\r\n` +
        `X-Request-Id: ${id}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"name": `,
      200,
    );
    const line = await completionOf(id);
    // The body parser's 400 (request aborted) was written to a closed connection: not sent.
    expect(line).toMatchObject({ res: { statusCode: null } });
    expect(line.msg).toMatch(
      /^POST \/api\/v1\/keys - closed before the answer was complete, after \d+ms$/,
    );
    const metrics = await scrape(app);
    const unanswered = { method: 'POST', route: 'unmatched' };
    expect(
      sample(metrics, 'gateway_http_requests_unanswered_total', unanswered),
    ).toBeGreaterThanOrEqual(1);
  });

  // The body parser answers the upload it lost with a 400, written after the connection closed:
  // it was logged as the status of an answer the client never received (a review's finding,
  // with `curl -m 2 --limit-rate 60K` and a 480 KB body).
  it.each([
    ['closed', false],
    ['reset', true],
  ])(
    'logs no status for a client that left mid-upload (connection %s), although a 400 was written after it left',
    async (how, reset) => {
      const id = `client-left-mid-upload-${how}`;
      await uploadSlowlyAndLeave(
        Number(new URL(app.url).port),
        `POST /api/v1/keys HTTP/1.1\r\nHost: localhost\r\nX-API-Key: ${TEST_MASTER_KEY}\r\n` +
          `X-Request-Id: ${id}\r\nContent-Type: application/json\r\nContent-Length: 480000\r\n\r\n{`,
        ' '.repeat(6000),
        { everyMs: 100, forMs: 1000, reset },
      );
      const line = await completionOf(id);
      expect(line).toMatchObject({ res: { statusCode: null } });
      expect(line.msg).toMatch(
        /^POST \/api\/v1\/keys - closed before the answer was complete, after \d+ms$/,
      );
    },
  );

  // Node's parser answers these before Express has the request: no line carried the id the
  // client was given, and no count had the answer (a review's finding).
  it("logs and counts each request Node's HTTP parser refused, under the id it was answered with, never its headers", async () => {
    const port = Number(new URL(app.url).port);
    const secretHeader = `x-marker-${'a'.repeat(20_000)}`;
    const tooLarge = parse(
      await exchange(port, (socket) =>
        socket.write(`GET /api/v1/health HTTP/1.1\r\nHost: x\r\nX-Big: ${secretHeader}\r\n\r\n`),
      ),
    );
    const badMethod = parse(
      await exchange(port, (socket) =>
        socket.write('M123 /api/v1/health HTTP/1.1\r\nHost: x\r\n\r\n'),
      ),
    );
    expect([tooLarge.status, badMethod.status]).toEqual([431, 400]);
    expect(await completionOf(String(tooLarge.body.request_id))).toMatchObject({
      level: 30,
      req: { id: tooLarge.body.request_id, method: 'GET' },
      res: { statusCode: 431 },
      parser_error: 'HPE_HEADER_OVERFLOW',
      msg: 'GET 431 refused by the HTTP parser (HPE_HEADER_OVERFLOW)',
    });
    expect(await completionOf(String(badMethod.body.request_id))).toMatchObject({
      req: { id: badMethod.body.request_id, method: 'other' },
      res: { statusCode: 400 },
      parser_error: 'HPE_INVALID_METHOD',
    });
    expect(capture.text).not.toContain('x-marker-');
    expect(capture.text).not.toContain('M123');
    const metrics = await scrape(app);
    const refused = (method: string, status: string) =>
      sample(metrics, 'gateway_http_requests_total', { method, route: 'unmatched', status });
    expect(refused('GET', '431')).toBe(1);
    expect(refused('other', '400')).toBe(1);
  });

  // The request id on lines logged by the code handling a request (an unexpected error's, by the
  // exception filter) is tested in src/common/errors/all-exceptions.filter.spec.ts: a real app
  // has no 500 to provoke without faking one of its services.

  /** The line a handler logged under `requestId` (not its request line), once written. */
  const handlerLineOf = (requestId: string, context: string) =>
    eventually(async () => {
      const found = capture
        .lines<LogLine>()
        .find((entry) => entry.req?.id === requestId && entry.context === context);
      expect(found).toBeDefined();
      return Promise.resolve(found!);
    });

  // A create whose client gave up (a database freeze) is still made: the key works, and no one
  // has it (a review's finding). Its id, with the request's, lets an operator find and deactivate
  // it. Each change to a key is an audit line of its own: which key, what changed, by whom.
  it('writes an audit line for each key created, changed and deactivated, never the key or its hash', async () => {
    const created = await app.http
      .post('/api/v1/keys')
      .set('X-API-Key', TEST_MASTER_KEY)
      .set('X-Request-Id', 'create-key-0001')
      .send({ name: 'created-name-7a3b', tier: 'validator', rate_limit: 500 })
      .expect(200);
    const { id, key } = created.body as { id: string; key: string };
    expect(await handlerLineOf('create-key-0001', 'ApiKeysService')).toMatchObject({
      level: 30,
      msg: `key ${id} created (tier validator) by master`,
      audit: 'key_created',
      key: {
        id,
        name: 'created-name-7a3b',
        tier: 'validator',
        expires_at: null,
        rate_limit: 500,
      },
      by: 'master',
    });
    await app.http
      .patch(`/api/v1/keys/${id}`)
      .set('X-API-Key', TEST_MASTER_KEY)
      .set('X-Request-Id', 'update-key-0001')
      .send({ name: 'renamed-7a3b', rate_limit: null })
      .expect(200);
    expect(await handlerLineOf('update-key-0001', 'ApiKeysService')).toMatchObject({
      level: 30,
      msg: `key ${id} updated (name, rate_limit) by master`,
      audit: 'key_updated',
      key: { id, name: 'renamed-7a3b', tier: 'validator' },
      changes: {
        name: { from: 'created-name-7a3b', to: 'renamed-7a3b' },
        rate_limit: { from: 500, to: null },
      },
      by: 'master',
    });
    // By the key itself, as the route allows: the line names it by id only.
    await app.http
      .post(`/api/v1/keys/${key}/deactivate`)
      .set('X-API-Key', TEST_MASTER_KEY)
      .set('X-Request-Id', 'deactivate-key-0001')
      .expect(200);
    expect(await handlerLineOf('deactivate-key-0001', 'ApiKeysService')).toMatchObject({
      level: 30,
      msg: `key ${id} deactivated by master`,
      audit: 'key_deactivated',
      key: { id, name: 'renamed-7a3b', tier: 'validator' },
      changes: { is_active: { from: true, to: false } },
      by: 'master',
    });
    const hash = createHash('sha256').update(key).digest('hex');
    for (const secret of [key, key.slice(12), hash]) expect(capture.text).not.toContain(secret);
  });

  // The 401's body tells an unknown key from a deactivated one no more than before: its line
  // says which, and from which address, and the counter counts it.
  it("says on a 401's line why it was refused and from which address, and counts it by reason", async () => {
    const { key: deactivated } = await createKey(app);
    await app.http
      .post(`/api/v1/keys/${deactivated}/deactivate`)
      .set('X-API-Key', TEST_MASTER_KEY)
      .expect(200);
    const clock = app.app.get(Clock);
    const { key: expiring } = await createKey(app, {
      expires_at: new Date(clock.now().getTime() + 60_000).toISOString(),
    });
    clock.advance(61_000);
    const before = await scrape(app);
    const refusals: [string, Record<string, string>, string][] = [
      ['auth-missing', {}, 'missing_key'],
      ['auth-wrong', { 'X-API-Key': `sk_live_${'w'.repeat(43)}` }, 'wrong_key'],
      ['auth-deactivated', { 'X-API-Key': deactivated }, 'deactivated_key'],
      ['auth-expired', { 'X-API-Key': expiring }, 'expired_key'],
    ];
    for (const [id, headers, reason] of refusals) {
      await app.http.get('/api/v1/health').set(headers).set('X-Request-Id', id).expect(401);
      const line = await completionOf(id);
      expect(line).toMatchObject({
        level: 30,
        auth_failure: reason,
        req: { remoteAddress: expect.stringMatching(/^(::ffff:)?127\.0\.0\.1$/) },
        msg: expect.stringMatching(/^GET \/api\/v1\/health 401 \d+ms$/),
      });
      for (const secret of [deactivated, expiring])
        expect(JSON.stringify(line)).not.toContain(secret);
    }
    await app.http
      .get('/metrics')
      .set('Authorization', 'Bearer not-the-metrics-token-0000')
      .set('X-Request-Id', 'auth-token')
      .expect(401);
    expect(await completionOf('auth-token')).toMatchObject({ auth_failure: 'wrong_metrics_token' });
    const after = await scrape(app);
    const failures = (text: string, reason: string) =>
      sample(text, 'gateway_auth_failures_total', { reason }) ?? 0;
    for (const reason of [
      'missing_key',
      'wrong_key',
      'deactivated_key',
      'expired_key',
      'wrong_metrics_token',
    ])
      expect(failures(after, reason) - failures(before, reason)).toBe(1);
  });

  it('never logs keys, key hashes, tokens or the bodies of key requests', async () => {
    const created = await createKey(app, { tier: 'validator' });
    await app.http
      .post('/api/v1/keys')
      .set('X-API-Key', TEST_MASTER_KEY)
      .send({ name: 'x', tier: 'body-marker-tier-9d2f' })
      .expect(422);
    await app.http.get('/api/v1/health').set('X-API-Key', created.key).expect(200);
    await app.http.get('/metrics').set('Authorization', `Bearer ${METRICS_TOKEN}`).expect(200);
    await app.http
      .post(`/api/v1/keys/${TEST_MASTER_KEY}/deactivate`)
      .set('X-API-Key', TEST_MASTER_KEY)
      .expect(404);
    const deactivated = await app.http
      .post(`/api/v1/keys/${created.key}/deactivate`)
      .set('X-API-Key', TEST_MASTER_KEY)
      .set('X-Request-Id', 'deactivate-by-key')
      .expect(200);
    expect(deactivated.body).toEqual({ status: 'success' });
    const line = await completionOf('deactivate-by-key');

    const log = capture.text;
    const hash = createHash('sha256').update(created.key).digest('hex');
    // Not the key's name: set by the master key, it is in the key's audit lines (above).
    for (const secret of [
      created.key,
      created.key.slice(12),
      hash,
      TEST_MASTER_KEY,
      METRICS_TOKEN,
      'body-marker-tier-9d2f',
    ])
      expect(log).not.toContain(secret);
    // The path is still readable: an issued key by its display prefix, the master key not at all.
    expect(line.req?.url).toBe(`/api/v1/keys/${created.key.slice(0, 12)}…/deactivate`);
    expect(log).toContain('/api/v1/keys/[redacted]/deactivate');
  });
});

describe('Development logs', () => {
  const capture = new LogCapture();
  let app: TestApp;

  beforeAll(async () => {
    app = await startTestApp(
      { NODE_ENV: 'development', LOG_LEVEL: 'info' },
      { logDestination: capture },
    );
  });
  afterAll(() => app.close());

  it('are human-readable single lines (pino-pretty), with the request id', async () => {
    await app.http
      .get('/api/v1/health')
      .set('X-API-Key', TEST_MASTER_KEY)
      .set('X-Request-Id', 'dev-request-1')
      .expect(200);
    // Without colour codes, whether or not the terminal running the tests has colours.
    const plain = () => capture.text.replace(/\u001b\[[0-9;]*m/g, '');
    const line = await eventually(async () => {
      const found = plain()
        .split('\n')
        .find((entry) => entry.includes('dev-request-1'));
      expect(found).toBeDefined();
      return Promise.resolve(found!);
    });
    expect(line).toMatch(
      /^\[\d{2}:\d{2}:\d{2}\.\d{3}\] INFO \(\d+\): GET \/api\/v1\/health 200 \d+ms /,
    );
    expect(() => JSON.parse(line) as unknown).toThrow();
  });
});

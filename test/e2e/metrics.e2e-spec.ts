import { DataSource } from 'typeorm';
import { IndexSyncService } from '../../src/network/index-sync/index-sync.service';
import { CallBudgets } from '../../src/network/transport/call-budgets';
import { createKey } from '../support/fixtures';
import { eventually, scrape } from '../support/metrics';
import { sample } from '../support/prometheus-text';
import { startTestNetwork, TestNetwork } from '../support/network';
import { startTestApp, TEST_MASTER_KEY, TestApp } from '../support/test-app';

const METRICS_TOKEN = 'metrics-token-for-tests-0123456789';

describe('GET /metrics', () => {
  let app: TestApp;

  beforeAll(async () => {
    app = await startTestApp({ METRICS_TOKEN, RATE_LIMIT_REGULAR: '2' });
  });
  afterAll(() => app.close());

  describe('access', () => {
    it('answers 401 without credentials, in the usual error shape, with both challenges', async () => {
      const response = await app.http.get('/metrics').expect(401);
      expect(response.body).toMatchObject({ detail: 'Missing API key' });
      expect(response.headers['www-authenticate']).toBe('APIKey header="X-API-Key", Bearer');
    });

    it('answers 403 to a key that is not the master key', async () => {
      const { key } = await createKey(app, { tier: 'validator' });
      const response = await app.http.get('/metrics').set('X-API-Key', key).expect(403);
      expect(response.body).toMatchObject({
        detail: 'Metrics need the master key or the metrics token',
      });
    });

    it('answers 401 to a wrong bearer token and to an unknown key', async () => {
      const wrongToken = await app.http
        .get('/metrics')
        .set('Authorization', 'Bearer not-the-metrics-token')
        .expect(401);
      expect(wrongToken.body).toMatchObject({ detail: 'Invalid metrics token' });
      expect(wrongToken.headers['www-authenticate']).toBe(
        'APIKey header="X-API-Key", Bearer error="invalid_token"',
      );
      const unknownKey = await app.http.get('/metrics').set('X-API-Key', 'sk_live_unknown');
      expect(unknownKey.status).toBe(401);
      expect(unknownKey.body).toMatchObject({ detail: 'Invalid API key' });
    });

    it('serves the Prometheus text format to the master key and to the metrics token', async () => {
      const withMaster = await app.http.get('/metrics').set('X-API-Key', TEST_MASTER_KEY);
      const withToken = await app.http
        .get('/metrics')
        .set('Authorization', `Bearer ${METRICS_TOKEN}`);
      // The scheme's name in any case (RFC 9110 §11.1).
      const lowerCase = await app.http
        .get('/metrics')
        .set('Authorization', `bearer ${METRICS_TOKEN}`);
      for (const response of [withMaster, withToken, lowerCase]) {
        expect(response.status).toBe(200);
        // As documented, to the letter.
        expect(response.headers['content-type']).toBe('text/plain; charset=utf-8; version=0.0.4');
        expect(response.text).toContain('# TYPE gateway_http_requests_total counter');
      }
    });

    it('does not charge scrapes to the master key budget', async () => {
      const response = await app.http.get('/metrics').set('X-API-Key', TEST_MASTER_KEY);
      expect(response.headers['x-ratelimit-remaining']).toBeUndefined();
    });

    it('is documented in the OpenAPI document with a text/plain answer', async () => {
      const document = (await app.http.get('/openapi.json').expect(200)).body;
      const operation = document.paths['/metrics'].get;
      expect(operation.security).toEqual([{ ApiKey: [] }, { MetricsToken: [] }]);
      expect(Object.keys(operation.responses['200'].content)).toEqual([
        'text/plain; charset=utf-8; version=0.0.4',
      ]);
      expect(operation.responses).toHaveProperty('401');
      expect(operation.responses).toHaveProperty('403');
      expect(document.components.securitySchemes.MetricsToken).toMatchObject({
        type: 'http',
        scheme: 'bearer',
      });
    });

    it('refuses the bearer token when the service has no METRICS_TOKEN', async () => {
      const other = await startTestApp();
      try {
        await other.http
          .get('/metrics')
          .set('Authorization', `Bearer ${METRICS_TOKEN}`)
          .expect(401);
      } finally {
        await other.close();
      }
    });
  });

  it('counts requests by route template and status, never by raw URL', async () => {
    const labels = (route: string, status: string, method = 'GET') => ({ method, route, status });
    const before = await scrape(app);
    for (let i = 0; i < 2; i++) {
      await app.http
        .get('/api/v1/get_top_labels_by_source/reddit')
        .set('X-API-Key', TEST_MASTER_KEY)
        .expect(200);
    }
    await app.http.get('/api/v1/tasks/no-such-task').set('X-API-Key', TEST_MASTER_KEY).expect(404);
    // A marker no number in the metrics can contain (a digit run could: heap sizes, durations).
    await app.http.get('/api/v1/no/such/route/raw-url-marker').expect(404);
    const after = await scrape(app);

    const topLabels = labels('/api/v1/get_top_labels_by_source/:source', '200');
    const delta = (name: string, series: Record<string, string>) =>
      (sample(after, name, series) ?? 0) - (sample(before, name, series) ?? 0);
    expect(delta('gateway_http_requests_total', topLabels)).toBe(2);
    expect(delta('gateway_http_request_duration_seconds_count', topLabels)).toBe(2);
    expect(sample(after, 'gateway_http_request_duration_seconds_sum', topLabels)).toBeGreaterThan(
      0,
    );
    expect(delta('gateway_http_requests_total', labels('/api/v1/tasks/:id', '404'))).toBe(1);
    expect(delta('gateway_http_requests_total', labels('unmatched', '404'))).toBe(1);
    expect(after).not.toContain('get_top_labels_by_source/reddit');
    expect(after).not.toContain('raw-url-marker');
    expect(after).not.toContain('no-such-task');
  });

  // The routes @nestjs/swagger and the app register are routes too; the static files are not.
  it("counts the documentation's page, init script and document under their routes, its other files as unmatched", async () => {
    const labels = (route: string) => ({ method: 'GET', route, status: '200' });
    const before = await scrape(app);
    await app.http.get('/docs').expect(200);
    await app.http.get('/docs/').expect(200);
    await app.http.get('/docs/swagger-ui-init.js').expect(200);
    await app.http.get('/openapi.json').expect(200);
    await app.http.get('/').expect(200);
    await app.http.get('/docs/swagger-ui.css').expect(200);
    await app.http.get('/docs/swagger-ui-bundle.js').expect(200);
    const after = await scrape(app);
    const delta = (route: string) =>
      (sample(after, 'gateway_http_requests_total', labels(route)) ?? 0) -
      (sample(before, 'gateway_http_requests_total', labels(route)) ?? 0);
    expect({
      page: delta('/docs'),
      init: delta('/docs/swagger-ui-init.js'),
      document: delta('/openapi.json'),
      pointer: delta('/'),
      files: delta('unmatched'),
    }).toEqual({ page: 2, init: 1, document: 1, pointer: 1, files: 2 });
  });

  it('counts a 429 as a rate-limit rejection of the key class', async () => {
    const series = { key_class: 'regular' };
    const before = sample(await scrape(app), 'gateway_rate_limit_rejections_total', series) ?? 0;
    const { key } = await createKey(app, { tier: 'regular' });
    for (let i = 0; i < 2; i++)
      await app.http.get('/api/v1/health').set('X-API-Key', key).expect(200);
    await app.http.get('/api/v1/health').set('X-API-Key', key).expect(429);
    const after = await scrape(app);
    expect(sample(after, 'gateway_rate_limit_rejections_total', series)).toBe(before + 1);
    // Every class's series exists from the start, at 0 (a metrics audit: the lockout alert's
    // increase() missed the first event after a start).
    expect(sample(after, 'gateway_rate_limit_rejections_total', { key_class: 'validator' })).toBe(
      0,
    );
  });

  // The master key is of the validator class, and has its budget; its refusals are counted
  // apart, so that an alert can watch them.
  it("counts the master key's 429 as the master key's, not its class's", async () => {
    const small = await startTestApp({ RATE_LIMIT_VALIDATOR: '2' });
    try {
      for (let i = 0; i < 2; i++)
        await small.http.get('/api/v1/health').set('X-API-Key', TEST_MASTER_KEY).expect(200);
      await small.http.get('/api/v1/health').set('X-API-Key', TEST_MASTER_KEY).expect(429);
      // Scrapes are not charged to the budget, blocked or not.
      const after = await scrape(small);
      const rejections = (keyClass: string) =>
        sample(after, 'gateway_rate_limit_rejections_total', { key_class: keyClass });
      expect(rejections('master')).toBe(1);
      expect(rejections('validator')).toBe(0);
      expect(rejections('unauthenticated')).toBe(0);
    } finally {
      await small.close();
    }
  });

  it('counts on-demand answers by origin and status, errors included (all HTTP 200)', async () => {
    const series = (origin: string, status: string) => ({ origin, status });
    const before = await scrape(app);
    // No metagraph: the live path answers `status: "error"` (no miners), with HTTP 200.
    const response = await app.http
      .post('/api/v1/on_demand_data_request')
      .set('X-API-Key', TEST_MASTER_KEY)
      .send({ source: 'x', keywords: ['#bitcoin'] })
      .expect(200);
    expect(response.body).toMatchObject({ status: 'error', meta: { origin: 'live' } });
    const after = await scrape(app);
    const name = 'gateway_on_demand_answers_total';
    expect(sample(after, name, series('live', 'error'))).toBe(
      sample(before, name, series('live', 'error'))! + 1,
    );
    // Every series is there from the start, at 0 until counted.
    for (const origin of ['live', 'stored'])
      expect(sample(after, name, series(origin, 'success'))).toBe(0);
    expect(sample(after, name, series('stored', 'error'))).toBe(0);
  });

  // The app's own jobs, announced as they are scheduled: an alert sees their first failure.
  it('has the failure series of each job the app schedules, and of compiles and collections', async () => {
    const text = await scrape(app);
    for (const job of ['task-lifecycle', 'index-sync'])
      for (const stage of ['start', 'run'])
        expect([job, stage, sample(text, 'gateway_job_failures_total', { job, stage })]).toEqual([
          job,
          stage,
          expect.any(Number),
        ]);
    expect(sample(text, 'gateway_task_compile_failures_total', { reason: 'disk_full' })).toBe(0);
    expect(sample(text, 'gateway_task_collections_total', { outcome: 'failed' })).toBeDefined();
  });

  it('reports task states and pool usage as gauges, and prefixed process metrics', async () => {
    const text = await scrape(app);
    for (const state of ['active', 'compiling', 'completed', 'failed'])
      expect(sample(text, 'gateway_tasks', { state })).toBeGreaterThanOrEqual(0);
    expect(sample(text, 'gateway_db_pool_connections', { state: 'total' })).toBeGreaterThan(0);
    expect(sample(text, 'gateway_db_pool_connections', { state: 'idle' })).toBeGreaterThanOrEqual(
      0,
    );
    expect(sample(text, 'gateway_db_pool_connections', { state: 'waiting' })).toBeUndefined();
    expect(sample(text, 'gateway_db_pool_waiting_requests')).toBe(0);
    // Where datasets are written: a full disk showed only as failed compiles (a soak audit).
    const free = sample(text, 'gateway_datasets_disk_bytes', { state: 'free' })!;
    expect(free).toBeGreaterThan(0);
    expect(sample(text, 'gateway_datasets_disk_bytes', { state: 'total' })).toBeGreaterThanOrEqual(
      free,
    );
    expect(sample(text, 'gateway_process_resident_memory_bytes')).toBeGreaterThan(0);
    expect(text).toContain('gateway_nodejs_eventloop_lag_seconds');
    expect(text).toContain('gateway_nodejs_gc_duration_seconds');
  });
});

describe('GET /metrics with the miner network', () => {
  let network: TestNetwork;
  let app: TestApp;

  beforeAll(async () => {
    // uid 2 answers every call with HTTP 500.
    network = await startTestNetwork([{}, {}, { behaviour: { http500: true } }]);
    app = await startTestApp(
      { ...network.env, QUERY_MINERS: '3', QUERY_QUORUM: '2', QUERY_CACHE_TTL_SECONDS: '0' },
      { ownDatabase: true },
    );
  });
  afterAll(async () => {
    await app.close();
    await network.stop();
  });

  it('counts the miners as health does', async () => {
    const health = await app.http
      .get('/api/v1/health')
      .set('X-API-Key', TEST_MASTER_KEY)
      .expect(200);
    const text = await scrape(app);
    expect(sample(text, 'gateway_miners', { state: 'available' })).toBe(
      health.body.miners_available,
    );
    expect(sample(text, 'gateway_miners', { state: 'serving' })).toBe(3);
    expect(sample(text, 'gateway_miners', { state: 'address_refused' })).toBe(0);
  });

  it('records miner call latency by synapse and failures by miner, and the quorum outcome', async () => {
    const response = await app.http
      .post('/api/v1/on_demand_data_request')
      .set('X-API-Key', TEST_MASTER_KEY)
      .send({ source: 'x', keywords: ['#bitcoin'] })
      .expect(200);
    expect(response.body.status).toBe('success');

    // The failing miner may answer after the quorum was reached: its call ends a little later.
    const text = await eventually(async () => {
      const scraped = await scrape(app);
      const failures = { miner: '2', endpoint: 'OnDemandRequest', reason: 'http_error' };
      expect(sample(scraped, 'gateway_miner_call_failures_total', failures)).toBe(1);
      return scraped;
    });
    // One call to each of the three miners, timed by synapse (the miner's failures by miner).
    const calls = { endpoint: 'OnDemandRequest' };
    expect(sample(text, 'gateway_miner_call_duration_seconds_count', calls)).toBe(3);
    expect(
      sample(text, 'gateway_miner_call_failures_total', {
        miner: '0',
        endpoint: 'OnDemandRequest',
        reason: 'http_error',
      }),
    ).toBeUndefined();
    expect(sample(text, 'gateway_quorum_outcomes_total', { outcome: 'quorum' })).toBe(1);
    expect(
      sample(text, 'gateway_on_demand_answers_total', { origin: 'live', status: 'success' }),
    ).toBe(1);
  });

  it("shows what is left of the miners' call budgets, per synapse", async () => {
    const budgets = app.config.network.callBudgets;
    const serving = 3;
    const left = async () =>
      sample(await scrape(app), 'gateway_miner_calls_left', { synapse: 'OnDemandRequest' })!;
    const before = await left();
    expect(before).toBeLessThanOrEqual(serving * budgets.OnDemandRequest!.calls);
    // A live query takes one OnDemandRequest call of each miner it asks (all three).
    await app.http
      .post('/api/v1/on_demand_data_request')
      .set('X-API-Key', TEST_MASTER_KEY)
      .send({ source: 'x', keywords: ['#bitcoin'] })
      .expect(200);
    // The answer goes at the quorum (two of three): the third miner's call, and the spend of its
    // budget before it, may still be on their way (a run under load read 19 left, not 18).
    await eventually(async () => expect(await left()).toBe(before - serving));
    expect(
      sample(await scrape(app), 'gateway_miners_without_calls', { synapse: 'OnDemandRequest' }),
    ).toBe(0);

    // A miner's 403 spends its budget: it has no call left.
    const miner = network.devnet.miners[0];
    await app.app.get(CallBudgets).spend(miner.hotkey, 'GetContentsByBuckets');
    const spent = await scrape(app);
    expect(sample(spent, 'gateway_miners_without_calls', { synapse: 'GetContentsByBuckets' })).toBe(
      1,
    );
    expect(sample(spent, 'gateway_miner_calls_left', { synapse: 'GetContentsByBuckets' })).toBe(
      (serving - 1) * budgets.GetContentsByBuckets!.calls,
    );
  });

  it('records an index sync: its duration, rows and miners', async () => {
    await app.app.get(DataSource).query('DELETE FROM job_runs');
    const report = await app.app.get(IndexSyncService).runIfDue();
    expect(report).toBeDefined();
    expect(report!.rows).toBeGreaterThan(0);

    const text = await scrape(app);
    expect(sample(text, 'gateway_index_sync_duration_seconds_count')).toBe(1);
    expect(sample(text, 'gateway_index_sync_duration_seconds_sum')).toBeGreaterThan(0);
    expect(sample(text, 'gateway_index_sync_rows_total')).toBe(report!.rows);
    expect(sample(text, 'gateway_index_sync_miners_total', { result: 'synced' })).toBe(
      report!.synced,
    );
    expect(sample(text, 'gateway_index_sync_miners_total', { result: 'failed' })).toBe(
      report!.failed,
    );
    expect(sample(text, 'gateway_index_sync_last_completed_timestamp_seconds')).toBeGreaterThan(
      Date.now() / 1000 - 60,
    );
    // The index's own sync time, as system-status says it: what survives a restart.
    const status = await app.http
      .get('/api/v1/monitoring/system-status')
      .set('X-API-Key', TEST_MASTER_KEY)
      .expect(200);
    expect(sample(text, 'gateway_miner_index_newest_synced_timestamp_seconds')).toBe(
      Date.parse(status.body.components.miner_index.newest_synced_at) / 1000,
    );
    // One call to each of the three miners.
    expect(
      sample(text, 'gateway_miner_call_duration_seconds_count', { endpoint: 'GetMinerIndex' }),
    ).toBe(3);
  });
});

import { setTimeout as sleep } from 'node:timers/promises';
import { PROBE_QUERY_TIMEOUT_MS } from '../../src/database/data-source-options';
import { createKey } from '../support/fixtures';
import { eventually, scrape } from '../support/metrics';
import { sample } from '../support/prometheus-text';
import { LoadRequest, LoadSample, send, steadyLoad } from '../support/steady-load';
import { startTestApp, TEST_MASTER_KEY, TestApp } from '../support/test-app';
import { startThrowawayPostgres, ThrowawayPostgres } from '../support/throwaway-servers';

/** Generous bounds: the machine is shared, but an outage must never look like a hang. */
const MAX_LATENCY_MS = 3000;
const RECOVERY_MS = 5000;
/** Past the 1 s key cache and the 1 s health cache, every answer reflects the outage. */
const SETTLE_MS = 1500;

describe('Postgres outage', () => {
  let postgres: ThrowawayPostgres;
  let app: TestApp;

  beforeAll(async () => {
    postgres = await startThrowawayPostgres();
    app = await startTestApp({
      DATABASE_URL: postgres.url,
      RATE_LIMIT_REGULAR: '1000000',
      RATE_LIMIT_VALIDATOR: '1000000',
    });
  }, 120_000);
  afterAll(async () => {
    await app?.close();
    await postgres?.destroy();
  }, 60_000);

  it('answers 503 fast while Postgres is down and recovers by itself, losing nothing', async () => {
    // Committed before the outage: a key and a vote.
    const { key, id } = await createKey(app, { tier: 'validator', name: 'before the outage' });
    await app.http
      .post('/api/v1/set_desirabilities')
      .set('X-API-Key', key)
      .send({
        desirabilities: [{ id: 'outage-x', weight: 1, params: { platform: 'x', label: '#tao' } }],
      })
      .expect(200);

    const requests: LoadRequest[] = [
      { name: 'keys', path: '/api/v1/keys', key: TEST_MASTER_KEY },
      { name: 'desirabilities', path: '/api/v1/get_desirabilities', key },
      { name: 'top labels', path: '/api/v1/get_top_labels_by_source/x', key },
      { name: 'ages', path: '/api/v1/ages?source=reddit', key },
      { name: 'tasks', path: '/api/v1/tasks', key },
      { name: 'health', path: '/api/v1/health', key: TEST_MASTER_KEY },
      {
        name: 'create key',
        method: 'POST',
        path: '/api/v1/keys',
        key: TEST_MASTER_KEY,
        body: { name: 'under load' },
      },
    ];
    const load = steadyLoad(app, requests, 4);
    await sleep(1000);
    const stopping = Date.now();
    await postgres.stop();
    const stoppedAt = Date.now();
    await sleep(SETTLE_MS + 2500);
    const restarting = Date.now();
    await postgres.start();
    const restartedAt = Date.now();
    // Recovered when every kind of request has answered 200 after the restart.
    let recoveredAt: number | undefined;
    while (recoveredAt === undefined && Date.now() - restartedAt < 3 * RECOVERY_MS) {
      await sleep(100);
      const since = load.samples.filter((sample) => sample.startedAt >= restartedAt);
      const recovered = requests.every((request) =>
        since.some((sample) => sample.name === request.name && sample.status === 200),
      );
      if (recovered) recoveredAt = Math.max(...since.map((sample) => sample.endedAt));
    }
    const samples = await load.stop();

    const report = summarize(samples, {
      stopping,
      stoppedAt,
      restarting,
      restartedAt,
      recoveredAt,
    });
    console.log(report.text);

    // Never a 500, never a hang, never slow.
    expect(samples.filter((sample) => sample.status !== 200 && sample.status !== 503)).toEqual([]);
    expect(report.maxLatencyMs).toBeLessThanOrEqual(MAX_LATENCY_MS);
    // During the outage every answer is a 503 with the documented body.
    const during = samples.filter(
      (sample) => sample.startedAt >= stoppedAt + SETTLE_MS && sample.endedAt <= restarting,
    );
    expect(during.length).toBeGreaterThan(20);
    for (const sample of during) {
      expect(sample.status).toBe(503);
      if (sample.name === 'health') {
        expect(sample.body).toMatchObject({ status: 'unhealthy' });
      } else {
        expect(sample.body).toEqual({
          detail: 'Database unavailable, try again shortly',
          request_id: sample.requestId,
        });
      }
    }
    // Back within 5 s of Postgres being back, without a restart of the service.
    expect(recoveredAt).toBeDefined();
    expect(recoveredAt! - restartedAt).toBeLessThanOrEqual(RECOVERY_MS);

    // What was committed before the outage is still there.
    const keys = await send(app, requests[0]);
    expect(keys.status).toBe(200);
    expect(keys.body).toMatchObject({
      keys: expect.arrayContaining([expect.objectContaining({ id, name: 'before the outage' })]),
    });
    const vote = await app.http
      .get(`/api/v1/get_desirabilities?hotkey=${app.config.validatorKeypair.address}`)
      .set('X-API-Key', key)
      .expect(200);
    expect(JSON.stringify(vote.body)).toContain('outage-x');
    await app.http.get('/api/v1/tasks/outage-x').set('X-API-Key', key).expect(200);
  }, 120_000);

  it('answers health and /metrics in time while Postgres hangs without closing connections', async () => {
    // The README's balancer key: an issued key, looked up in Postgres once its cache entry expires.
    const { key: balancerKey } = await createKey(app, { name: 'load balancer health check' });
    await app.http.get('/api/v1/health').set('X-API-Key', balancerKey).expect(200);
    await app.http.get('/api/v1/health').set('X-API-Key', TEST_MASTER_KEY).expect(200);
    expect(sample(await scrape(app), 'gateway_database_up')).toBe(1);
    postgres.pause();
    try {
      // Past the 1 s health cache: the next health runs its checks against the frozen server.
      await sleep(SETTLE_MS);
      let started = Date.now();
      const health = await app.http.get('/api/v1/health').set('X-API-Key', TEST_MASTER_KEY);
      const healthMs = Date.now() - started;
      // Its key's lookup hangs on the frozen server; the poll is answered from the key's last read
      // (it had waited for good, and every later poll of the key with it).
      for (let poll = 0; poll < 2; poll += 1) {
        started = Date.now();
        const polled = await app.http.get('/api/v1/health').set('X-API-Key', balancerKey);
        const polledMs = Date.now() - started;
        console.log(`frozen postgres: health by an issued key ${polled.status} in ${polledMs} ms`);
        expect(polled.status).toBe(503);
        expect(polled.body).toMatchObject({ status: 'unhealthy' });
        expect(polledMs).toBeLessThan(MAX_LATENCY_MS);
      }
      started = Date.now();
      const metrics = await app.http.get('/metrics').set('X-API-Key', TEST_MASTER_KEY);
      const metricsMs = Date.now() - started;
      console.log(
        `frozen postgres: health ${health.status} in ${healthMs} ms, /metrics ${metrics.status} in ${metricsMs} ms`,
      );
      expect(health.status).toBe(503);
      expect(health.body).toMatchObject({ status: 'unhealthy' });
      // Health's checks wait 1 s each, side by side; a scrape's database reads 2 s each.
      expect(healthMs).toBeLessThan(MAX_LATENCY_MS);
      expect(metrics.status).toBe(200);
      expect(metricsMs).toBeLessThan(MAX_LATENCY_MS + 1000);
      // The gauges read from Postgres keep their last values: this one says they are stale.
      expect(sample(metrics.text, 'gateway_database_up')).toBe(0);
    } finally {
      postgres.resume();
    }
    await eventually(async () => {
      await app.http.get('/api/v1/health').set('X-API-Key', TEST_MASTER_KEY).expect(200);
    });
    expect(sample(await scrape(app), 'gateway_database_up')).toBe(1);
  }, 60_000);

  // No health poll in between: a scrape asks the database itself, as on an idle replica.
  it('says on /metrics that the database is down while Postgres is stopped, and up once it is back', async () => {
    expect(sample(await scrape(app), 'gateway_database_up')).toBe(1);
    await postgres.stop();
    try {
      await eventually(async () =>
        expect(sample(await scrape(app), 'gateway_database_up')).toBe(0),
      );
    } finally {
      await postgres.start();
    }
    await eventually(async () => expect(sample(await scrape(app), 'gateway_database_up')).toBe(1));
  }, 60_000);

  it('shuts down in seconds while Postgres hangs under a health check in flight', async () => {
    const other = await startTestApp({ DATABASE_URL: postgres.url });
    let closedInMs: number | undefined;
    try {
      await other.http.get('/api/v1/health').set('X-API-Key', TEST_MASTER_KEY).expect(200);
      postgres.pause();
      await sleep(SETTLE_MS);
      // The check's query waits on the frozen server; the answer does not (503 after 1 s).
      await other.http.get('/api/v1/health').set('X-API-Key', TEST_MASTER_KEY).expect(503);
      const closing = Date.now();
      await other.close();
      closedInMs = Date.now() - closing;
    } finally {
      postgres.resume();
      if (closedInMs === undefined) await other.close();
    }
    console.log(`frozen postgres: closed in ${closedInMs} ms`);
    // The health connection's query timer (3 s) bounds the wait; without it, close never ended.
    expect(closedInMs).toBeLessThan(PROBE_QUERY_TIMEOUT_MS + 2000);
  }, 60_000);
});

function summarize(
  samples: LoadSample[],
  times: {
    stopping: number;
    stoppedAt: number;
    restarting: number;
    restartedAt: number;
    recoveredAt?: number;
  },
): { maxLatencyMs: number; text: string } {
  const latencies = samples.map((sample) => sample.endedAt - sample.startedAt);
  const outage = samples.filter(
    (sample) => sample.startedAt >= times.stoppedAt && sample.endedAt <= times.restarting,
  );
  const outageLatencies = outage
    .map((sample) => sample.endedAt - sample.startedAt)
    .sort((a, b) => a - b);
  const byStatus = new Map<number, number>();
  for (const sample of samples) byStatus.set(sample.status, (byStatus.get(sample.status) ?? 0) + 1);
  const maxLatencyMs = Math.max(...latencies);
  const text = [
    `postgres outage: ${samples.length} requests, statuses ${JSON.stringify(Object.fromEntries(byStatus))}`,
    `stop took ${times.stoppedAt - times.stopping} ms, restart took ${times.restartedAt - times.restarting} ms`,
    `during the outage: ${outage.length} requests, p50 ${outageLatencies[Math.floor(outageLatencies.length / 2)] ?? '-'} ms, max ${outageLatencies.at(-1) ?? '-'} ms`,
    `max latency overall ${maxLatencyMs} ms; all endpoints 200 again ${times.recoveredAt === undefined ? 'never' : `${times.recoveredAt - times.restartedAt} ms`} after Postgres was back`,
  ].join('\n');
  return { maxLatencyMs, text };
}

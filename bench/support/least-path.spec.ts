import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import express from 'express';
import { until } from '../../test/support/until';
import { LeastPath, leastPath } from './least-path';

const KEY = 'sk_live_least-path-spec-key';

// The least path is a floor the service is measured against: it must do every piece of work it
// stands for, or the floor would be too fast and the comparison flattering to no one.
describe('the least path', () => {
  let dir: string;
  let least: LeastPath;
  let server: Server;
  let url: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'least-path-spec-'));
    least = leastPath({
      apiKey: KEY,
      limit: 2,
      windowSeconds: 60,
      logFile: join(dir, 'requests.log'),
    });
    const app = express();
    app.use(least.middleware);
    app.get('/api/v1/health', (_request, response) => void response.json({ status: 'healthy' }));
    server = await new Promise<Server>((resolve) => {
      const listening = app.listen(0, '127.0.0.1', () => resolve(listening));
    });
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1/health`;
  });

  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
    rmSync(dir, { recursive: true, force: true });
  });

  const get = (key?: string) => fetch(url, { headers: key ? { 'X-API-Key': key } : {} });

  it('refuses an unknown key, counts a known one, refuses it over its limit, and counts, times and logs every answer', async () => {
    expect((await get('sk_live_wrong')).status).toBe(401);
    expect((await get()).status).toBe(401);

    const first = await get(KEY);
    expect(first.status).toBe(200);
    expect(first.headers.get('x-ratelimit-remaining')).toBe('1');
    expect(first.headers.get('ratelimit')).toBe('"default";r=1;t=60');
    expect(first.headers.get('ratelimit-policy')).toBe('"default";q=2;w=60');
    expect(first.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    expect(first.headers.get('x-content-type-options')).toBe('nosniff');

    expect((await get(KEY)).status).toBe(200);
    expect((await get(KEY)).status).toBe(429);

    // Every answer, refusals included, is counted, timed and logged.
    // A response is counted and logged on its `close`, which may come just after the client
    // has read it.
    const answered = async () =>
      (await least.registry.getMetricsAsJSON())
        .find((metric) => metric.name === 'requests')
        ?.values.reduce((sum, { value }) => sum + value, 0);
    // Up to 5 s, a loaded machine's worst case: the five closes are waited for, not assumed.
    await until(async () => ((await answered()) === 5 ? true : undefined), 5000, 10);
    const metrics = await least.registry.metrics();
    expect(metrics).toMatch(/^requests\{method="GET",route="\/api\/v1\/health",status="200"\} 2$/m);
    expect(metrics).toMatch(/^duration_count\{[^}]*status="429"\} 1$/m);

    await least.closeLog();
    const lines = readFileSync(join(dir, 'requests.log'), 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { msg: string; req: { id: string } });
    expect(lines.map((line) => line.msg.replace(/ \d+ms$/, ''))).toEqual([
      'GET /api/v1/health 401',
      'GET /api/v1/health 401',
      'GET /api/v1/health 200',
      'GET /api/v1/health 200',
      'GET /api/v1/health 429',
    ]);
    expect(new Set(lines.map((line) => line.req.id)).size).toBe(5);
  });
});

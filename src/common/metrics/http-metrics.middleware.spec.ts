import { once } from 'node:events';
import { createServer, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { sample } from '../../../test/support/prometheus-text';
import { sendAndLeave } from '../../../test/support/send-and-leave';
import { until } from '../../../test/support/until';
import { httpMetricsMiddleware } from './http-metrics.middleware';
import { MetricsService } from './metrics.service';

/** An app measured as app.setup.ts measures the gateway, with a few routes. */
async function serve(metrics: MetricsService): Promise<{ server: Server; url: string }> {
  const app = express();
  app.use(httpMetricsMiddleware(metrics));
  app.get('/api/v1/tasks/:id', (_request, response) => {
    setTimeout(() => void response.status(404).send('no such task'), 150);
  });
  // A router mounted under a prefix: the template is the whole path, prefix included.
  const router = express.Router();
  router.get('/items/:id', (_request, response) => void response.send('item'));
  app.use('/api/v2', router);
  app.get('/hang', () => undefined);
  // The catch-all that answers what no route matched, as Nest's not-found handler does.
  app.all('/{*rest}', (_request, response) => void response.status(404).send('not found'));
  const server = createServer(app).listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

describe(httpMetricsMiddleware.name, () => {
  let metrics: MetricsService;
  let server: Server;
  let url: string;
  beforeEach(async () => {
    metrics = new MetricsService();
    ({ server, url } = await serve(metrics));
  });
  afterEach(() => server.close());

  // A request is counted on its response's `close`, which may come after the client has read it:
  // the waits below poll for it, up to 5 s for a loaded machine's stalls.
  const answered = async (route: string, status: string) =>
    sample(await metrics.scrape(), 'gateway_http_requests_total', { method: 'GET', route, status });

  it('counts a request under its route template and status, timed in seconds', async () => {
    await fetch(`${url}/api/v1/tasks/some-task`).then((response) => response.text());
    const series = { method: 'GET', route: '/api/v1/tasks/:id', status: '404' };
    const text = await until(async () => {
      const scraped = await metrics.scrape();
      return sample(scraped, 'gateway_http_requests_total', series) ? scraped : undefined;
    }, 5_000);
    expect(sample(text, 'gateway_http_requests_total', series)).toBe(1);
    // The handler took 150 ms: 0.15 s, not 150 (milliseconds) nor 0 (timed from the end).
    const seconds = sample(text, 'gateway_http_request_duration_seconds_sum', series)!;
    expect(seconds).toBeGreaterThanOrEqual(0.14);
    expect(seconds).toBeLessThan(5);
    expect(text).not.toContain('some-task');
  });

  it("names a mounted router's route by its whole path", async () => {
    await fetch(`${url}/api/v2/items/42`).then((response) => response.text());
    expect(await until(() => answered('/api/v2/items/:id', '200'), 5_000)).toBe(1);
  });

  it('counts what no route matched as unmatched, not under the catch-all', async () => {
    await fetch(`${url}/no/such/path`).then((response) => response.text());
    expect(await until(() => answered('unmatched', '404'), 5_000)).toBe(1);
    expect(await metrics.scrape()).not.toContain('*');
  });

  // Each method was a series per route and status (fifteen in the histogram): a client without a
  // key trying Node's 35 methods added a few thousand (a metrics audit).
  it("counts a method other than the API's few as other, whatever its name", async () => {
    for (const method of ['PROPFIND', 'MKCALENDAR', 'PURGE', 'DELETE'])
      await fetch(`${url}/no/such/path`, { method }).then((response) => response.text());
    const count = async (method: string) =>
      sample(await metrics.scrape(), 'gateway_http_requests_total', {
        method,
        route: 'unmatched',
        status: '404',
      });
    expect(await until(() => count('other').then((n) => (n === 3 ? n : undefined)), 5_000)).toBe(3);
    expect(await count('DELETE')).toBe(1);
    expect(await metrics.scrape()).not.toMatch(/PROPFIND|MKCALENDAR|PURGE/);
  });

  it('counts a request whose client left under its route, apart from the answered ones', async () => {
    await sendAndLeave(Number(new URL(url).port), 'GET /hang HTTP/1.1\r\nHost: x\r\n\r\n');
    const unanswered = () =>
      metrics
        .scrape()
        .then((text) =>
          sample(text, 'gateway_http_requests_unanswered_total', { method: 'GET', route: '/hang' }),
        );
    expect(await until(unanswered, 5_000)).toBe(1);
    expect(await metrics.scrape()).not.toMatch(/^gateway_http_requests_total\{/m);
  });
});

import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CanActivate } from '@nestjs/common';
import type { NestExpressApplication } from '@nestjs/platform-express';
import express from 'express';
import { storage as requestScope } from 'nestjs-pino/storage';
import { createBareNest } from '../../bench/support/bare-nest';
import { LeanPath, leanPath } from '../../bench/support/lean-path';
import { testRedisUrl } from '../support/test-app';
import { until } from '../support/until';

const KEY = 'sk_live_lean-path-spec-key';

interface Replica {
  lean: LeanPath;
  server: Server;
  url: string;
}

// bench:health's lean path (bench/support/lean-path.ts), in this tier for its Redis. It is the
// floor that says whether 80 % of the bare route is reachable at all: it must do every piece of
// work the target counts, the count exact across replicas included, or it would prove a target
// reachable that is not.
describe('the lean path', () => {
  const dir = mkdtempSync(join(tmpdir(), 'lean-path-spec-'));
  // Two replicas sharing one count in Redis, each logging to its own file.
  const keyId = randomUUID();
  const replicas: Replica[] = [];

  beforeAll(async () => {
    for (const name of ['a', 'b']) {
      const lean = leanPath({
        apiKey: KEY,
        limit: 3,
        windowSeconds: 60,
        logFile: join(dir, `${name}.log`),
        redisUrl: testRedisUrl(),
        keyId,
      });
      const app = express();
      app.use(lean.middleware);
      app.get('/api/v1/health', (_request, response) => void response.json({ status: 'healthy' }));
      const server = await new Promise<Server>((resolve) => {
        const listening = app.listen(0, '127.0.0.1', () => resolve(listening));
      });
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1/health`;
      replicas.push({ lean, server, url });
    }
  });

  afterAll(async () => {
    for (const { server } of replicas) await new Promise((resolve) => server.close(resolve));
    rmSync(dir, { recursive: true, force: true });
  });

  const get = (replica: Replica, key?: string) =>
    fetch(replica.url, { headers: key ? { 'X-API-Key': key } : {} });
  const counted = (replica: Replica) =>
    [...replica.lean.tallies.values()].reduce((sum, { count }) => sum + count, 0);

  it('refuses an unknown key, shares one exact count between replicas, refuses over the limit, and counts, times and logs every answer', async () => {
    const [a, b] = replicas;
    expect((await get(a, 'sk_live_wrong')).status).toBe(401);
    expect((await get(b)).status).toBe(401);

    const first = await get(a, KEY);
    expect(first.status).toBe(200);
    expect(first.headers.get('x-ratelimit-remaining')).toBe('2');
    expect(first.headers.get('ratelimit')).toBe('"default";r=2;t=60');
    expect(first.headers.get('ratelimit-policy')).toBe('"default";q=3;w=60');
    expect(first.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    expect(first.headers.get('x-content-type-options')).toBe('nosniff');
    // The other replica sees the first one's hit.
    expect((await get(b, KEY)).headers.get('x-ratelimit-remaining')).toBe('1');
    expect((await get(a, KEY)).status).toBe(200);
    const over = await get(b, KEY);
    expect(over.status).toBe(429);
    expect(over.headers.get('retry-after')).toBe('60');

    // A response is counted and logged on its `close`, which may come just after the client
    // has read it: polled for up to 10 s (100 tries of 10 ms allowed about a second).
    await until(() => Promise.resolve(counted(a) + counted(b) === 6 || undefined), 10_000, 10);
    expect(a.lean.tallies.get(200)?.count).toBe(2);
    expect(b.lean.tallies.get(429)?.count).toBe(1);
    const okTimes = a.lean.tallies.get(200);
    expect(okTimes?.buckets.reduce((sum, n) => sum + n, 0)).toBe(2);
    expect(okTimes?.sumSeconds).toBeGreaterThan(0);

    await Promise.all(replicas.map(({ lean }) => lean.close()));
    const lines = (name: string) =>
      readFileSync(join(dir, `${name}.log`), 'utf8')
        .trim()
        .split('\n')
        .map(
          (line) =>
            JSON.parse(line) as { level: number; msg: string; req: { id: string; url: string } },
        );
    const messages = (name: string) => lines(name).map(({ msg }) => msg.replace(/ \d+ms$/, ''));
    expect(messages('a')).toEqual([
      'GET /api/v1/health 401',
      'GET /api/v1/health 200',
      'GET /api/v1/health 200',
    ]);
    expect(messages('b')).toEqual([
      'GET /api/v1/health 401',
      'GET /api/v1/health 200',
      'GET /api/v1/health 429',
    ]);
    const all = [...lines('a'), ...lines('b')];
    expect(new Set(all.map(({ req }) => req.id)).size).toBe(6);
    expect(all.every(({ level, req }) => level === 30 && req.url === '/api/v1/health')).toBe(true);
  });
});

// The lean path in guards: the same work in the service's structure. It tells what that
// structure costs, so it must be the structure: each request in the request scope, the key
// check and the count in Nest's global guards, refusals as exceptions.
describe('the lean path in guards', () => {
  const dir = mkdtempSync(join(tmpdir(), 'lean-guards-spec-'));
  let lean: LeanPath;
  let app: NestExpressApplication;
  let url: string;
  /** Whether each request reached the guards in the request scope. */
  const scoped: boolean[] = [];

  beforeAll(async () => {
    lean = leanPath(
      {
        apiKey: KEY,
        limit: 2,
        windowSeconds: 60,
        logFile: join(dir, 'guards.log'),
        redisUrl: testRedisUrl(),
        keyId: randomUUID(),
      },
      true,
    );
    const probe: CanActivate = {
      canActivate: () => {
        scoped.push(requestScope.getStore() !== undefined);
        return true;
      },
    };
    app = await createBareNest('service', lean.middleware, [...lean.guards, probe]);
    await app.listen(0, '127.0.0.1');
    url = `${await app.getUrl()}/api/v1/health`;
  });

  afterAll(async () => {
    await app.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const get = (key?: string) => fetch(url, { headers: key ? { 'X-API-Key': key } : {} });

  it('refuses an unknown key in a guard, counts in a guard, refuses over the limit, and logs every answer', async () => {
    const refused = await get('sk_live_wrong');
    expect(refused.status).toBe(401);
    expect(await refused.json()).toEqual({ detail: 'Invalid API key' });
    expect(refused.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);

    const first = await get(KEY);
    expect(first.status).toBe(200);
    expect(first.headers.get('x-ratelimit-remaining')).toBe('1');
    expect(first.headers.get('ratelimit-policy')).toBe('"default";q=2;w=60');
    expect(first.headers.get('x-content-type-options')).toBe('nosniff');
    expect((await get(KEY)).status).toBe(200);
    const over = await get(KEY);
    expect(over.status).toBe(429);
    expect(over.headers.get('retry-after')).toBe('60');
    expect(await over.json()).toEqual({ detail: 'Rate limit exceeded' });
    // Only admitted requests reach the probe, the last guard; each in the request scope.
    expect(scoped).toEqual([true, true]);

    // Counted and logged on its `close`, as above.
    await until(() => Promise.resolve(lean.tallies.get(429)?.count === 1 || undefined), 10_000, 10);
    await lean.close();
    const messages = readFileSync(join(dir, 'guards.log'), 'utf8')
      .trim()
      .split('\n')
      .map((line) => (JSON.parse(line) as { msg: string }).msg.replace(/ \d+ms$/, ''));
    expect(messages).toEqual([
      'GET /api/v1/health 401',
      'GET /api/v1/health 200',
      'GET /api/v1/health 200',
      'GET /api/v1/health 429',
    ]);
  });
});

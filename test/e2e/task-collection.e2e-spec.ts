import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import { Clock } from '../../src/common/clock/clock';
import { TaskLifecycleService } from '../../src/modules/tasks/task-lifecycle.service';
import { scrape } from '../support/metrics';
import { startTestNetwork, TestNetwork } from '../support/network';
import { startTestApp, TEST_MASTER_KEY, TestApp } from '../support/test-app';

const INTERVAL_S = 3600;
const TICK_S = 60;
const MINERS = 3;

/** Collection within a budget: heaviest first, never more calls than the budget, lag reported. */
describe('Collecting scraping tasks', () => {
  let network: TestNetwork;
  let dataDir: string;
  let app: TestApp;

  beforeAll(async () => {
    network = await startTestNetwork(MINERS);
    dataDir = mkdtempSync(join(tmpdir(), 'gateway-collection-'));
    app = await startTestApp(
      {
        ...network.env,
        DATA_DIR: dataDir,
        QUERY_MINERS: String(MINERS),
        QUERY_QUORUM: '2',
        QUERY_CACHE_TTL_SECONDS: '0',
        TASK_COLLECT_INTERVAL: String(INTERVAL_S),
        TASK_LIFECYCLE_TICK: String(TICK_S),
        TASK_COLLECT_CONCURRENCY: '2',
        TASK_COLLECT_PER_MINUTE: '3000',
        // Collections are on-demand queries: more than the miners' OnDemandRequest budget of an
        // hour. This suite is about the collection budget; the miners' is tested elsewhere.
        MINER_CALL_BUDGETS: 'OnDemandRequest=none',
        // Miners made to fail below answer again at once, not after a breaker's cool-down.
        MINER_BREAKER_FAILURES: '1000',
      },
      { ownDatabase: true },
    );
  });
  afterAll(async () => {
    await app.close();
    await network.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const onDemandCalls = () =>
    Array.from(
      { length: MINERS },
      (_, uid) => network.devnet.requestCounts(uid).OnDemandRequest,
    ).reduce((sum, count) => sum + count, 0);
  const tasks = async () =>
    (await app.http.get('/api/v1/tasks?limit=100').set('X-API-Key', TEST_MASTER_KEY).expect(200))
      .body.tasks as {
      id: string;
      progress: { collections: number; collection_behind: boolean };
    }[];
  const byId = async () => new Map((await tasks()).map((task) => [task.id, task.progress]));

  it('collects the heaviest due tasks within the pass budget, and reports the others behind', async () => {
    const jobs = Array.from({ length: 15 }, (_, index) => ({
      id: `weighted-${String(index + 1).padStart(2, '0')}`,
      weight: index + 1,
      // A window of its own for each: jobs with the same params are one task, refused twice.
      params: {
        platform: 'x',
        label: '#bitcoin',
        post_start_datetime: `2020-01-${String(index + 1).padStart(2, '0')}T00:00:00Z`,
      },
    }));
    await app.http
      .post('/api/v1/set_desirabilities')
      .set('X-API-Key', TEST_MASTER_KEY)
      .send({ desirabilities: jobs })
      .expect(200);
    const lifecycle = app.app.get(TaskLifecycleService);
    const heaviest = jobs.slice(5).map((job) => job.id);
    const lightest = jobs.slice(0, 5).map((job) => job.id);

    const callsBefore = onDemandCalls();
    expect(await lifecycle.collectDue(10)).toBe(10);
    // One on-demand query per collection: at most the fan-out, plus spares, per collection.
    expect(onDemandCalls() - callsBefore).toBeLessThanOrEqual(10 * MINERS);
    let progress = await byId();
    for (const id of heaviest) expect(progress.get(id)?.collections).toBe(1);
    for (const id of lightest) expect(progress.get(id)?.collections).toBe(0);

    // A whole interval (and a tick) later, the budget again covers only the ten heaviest.
    app.app.get(Clock).advance((INTERVAL_S + TICK_S + 1) * 1000);
    expect(await lifecycle.collectDue(10)).toBe(10);
    progress = await byId();
    for (const id of heaviest)
      expect(progress.get(id)).toMatchObject({ collections: 2, collection_behind: false });
    for (const id of lightest)
      expect(progress.get(id)).toMatchObject({ collections: 0, collection_behind: true });
    const metrics = await scrape(app);
    expect(metrics).toMatch(/^gateway_tasks_collection_behind 5$/m);

    // The next pass reaches them: the lightest wait, but are not starved.
    expect(await lifecycle.collectDue(10)).toBe(5);
    progress = await byId();
    for (const id of lightest)
      expect(progress.get(id)).toMatchObject({ collections: 1, collection_behind: false });
  });

  it('tries a task whose collection failed again after a backoff, not at every tick', async () => {
    await app.http
      .post('/api/v1/set_desirabilities')
      .set('X-API-Key', TEST_MASTER_KEY)
      .send({
        desirabilities: [
          { id: 'unlucky', weight: 1, params: { platform: 'x', label: '#bitcoin' } },
        ],
      })
      .expect(200);
    const lifecycle = app.app.get(TaskLifecycleService);
    const clock = app.app.get(Clock);
    const tick = () => clock.advance(TICK_S * 1000 + 1);
    const collections = async () => (await byId()).get('unlucky')?.collections;
    for (let uid = 0; uid < MINERS; uid++) network.devnet.setBehaviour(uid, { http500: true });
    try {
      expect(await lifecycle.collectDue(10)).toBe(1);
      expect(await collections()).toBe(0);
      // First failure: a tick's wait; second: two ticks.
      expect(await lifecycle.collectDue(10)).toBe(0);
      tick();
      expect(await lifecycle.collectDue(10)).toBe(1);
      tick();
      expect(await lifecycle.collectDue(10)).toBe(0);
      tick();
      expect(await lifecycle.collectDue(10)).toBe(1);
    } finally {
      for (let uid = 0; uid < MINERS; uid++) network.devnet.setBehaviour(uid, {});
    }
    // Third failure: four ticks; then a collection that works, and the count starts again.
    clock.advance(4 * TICK_S * 1000 + 1);
    expect(await lifecycle.collectDue(10)).toBe(1);
    expect(await collections()).toBe(1);
    const [row] = await app.app
      .get(DataSource)
      .query<{ collect_failures: number }[]>(
        `SELECT collect_failures FROM scraping_tasks WHERE id = 'unlucky'`,
      );
    expect(row.collect_failures).toBe(0);
  });
});

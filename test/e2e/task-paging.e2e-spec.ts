import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Clock } from '../../src/common/clock/clock';
import { TaskLifecycleService } from '../../src/modules/tasks/task-lifecycle.service';
import { DataItem } from '../../src/network/protocol';
import { matchesPlainly, startTestNetwork, TestNetwork } from '../support/network';
import { registerTask } from '../support/tasks';
import { startTestApp, TEST_MASTER_KEY, TestApp } from '../support/test-app';
import { asBytes, jsonLines } from '../support/downloads';

const DAY = 24 * 3600 * 1000;
const LIMIT = 10;

/**
 * Collections page back through a task's window: a window in the past is collected whole over
 * several collections, not one page's worth again and again (docs/decisions.md, "Collection
 * within a budget").
 */
describe('Paging a task back through its window', () => {
  let network: TestNetwork;
  let dataDir: string;
  let app: TestApp;

  beforeAll(async () => {
    network = await startTestNetwork(3);
    dataDir = mkdtempSync(join(tmpdir(), 'gateway-paging-'));
    app = await startTestApp(
      {
        ...network.env,
        DATA_DIR: dataDir,
        QUERY_MINERS: '3',
        // Every miner's answer is waited for: what one alone holds is in the page too.
        QUERY_QUORUM: '3',
        QUERY_CACHE_TTL_SECONDS: '0',
        TASK_COLLECT_LIMIT: String(LIMIT),
        TASK_COLLECT_INTERVAL: '1',
        MINER_CALL_BUDGETS: 'OnDemandRequest=none',
      },
      { ownDatabase: true },
    );
  });
  afterAll(async () => {
    await app.close();
    await network.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const progressOf = async (id: string) =>
    (await app.http.get(`/api/v1/tasks/${id}`).set('X-API-Key', TEST_MASTER_KEY).expect(200)).body
      .progress as { items_collected: number; collections: number };

  it('collects a past window whole, one page further back each time, without repeats', async () => {
    const { corpus } = network.devnet;
    const postStart = new Date(corpus.now.getTime() - 25 * DAY);
    const postEnd = new Date(corpus.now.getTime() - 5 * DAY);
    const expected = corpus.items.filter((item) =>
      matchesPlainly(item, {
        source: 'X',
        keywords: ['#bitcoin'],
        start: postStart,
        end: postEnd,
      }),
    );
    // Enough for several pages, so that one page's worth cannot pass.
    expect(expected.length).toBeGreaterThan(4 * LIMIT);
    await registerTask(app.app, '5ValidatorHotkeyForPaging', 'past-btc', '#bitcoin', 'x', {
      postStart,
      postEnd,
    });
    const lifecycle = app.app.get(TaskLifecycleService);
    const clock = app.app.get(Clock);

    const counts: number[] = [];
    for (let collection = 0; collection < 3; collection++) {
      expect(await lifecycle.collectDue(1)).toBe(1);
      counts.push((await progressOf('past-btc')).items_collected);
      clock.advance(1100);
    }
    // Each collection brings a page of items not collected before.
    expect(counts[0]).toBe(LIMIT);
    expect(counts[2]).toBeGreaterThanOrEqual(3 * LIMIT - 2);

    // Paged to its start, the window is walked again from the top: nothing new, nothing twice.
    const pages = Math.ceil(expected.length / (LIMIT - 2)) + 3;
    for (let collection = 0; collection < pages; collection++) {
      await lifecycle.collectDue(1);
      clock.advance(1100);
    }
    expect((await progressOf('past-btc')).items_collected).toBe(expected.length);

    clock.advance(8 * DAY);
    expect(await lifecycle.runOnce()).toEqual({ collected: 0, compiled: 1 });
    const dataset = await asBytes(
      app.http.get('/api/v1/tasks/past-btc/dataset').set('X-API-Key', TEST_MASTER_KEY),
    ).expect(200);
    const uris = jsonLines<DataItem>(dataset.body as Buffer).map((item) => item.uri);
    expect(uris).toHaveLength(expected.length);
    expect(new Set(uris)).toEqual(new Set(expected.map((item) => item.uri)));
  });
});

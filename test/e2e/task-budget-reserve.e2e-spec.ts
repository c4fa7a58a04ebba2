import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TaskLifecycleService } from '../../src/modules/tasks/task-lifecycle.service';
import { startTestNetwork, TestNetwork } from '../support/network';
import { registerTask } from '../support/tasks';
import { startTestApp, TEST_MASTER_KEY, TestApp } from '../support/test-app';

const TASKS = 10;

/**
 * Scraping tasks leave users' queries a share of every miner's budget (TASK_BUDGET_RESERVE,
 * default half): with the default 8 OnDemandRequest calls an hour, tasks that would take them
 * all take 4 of each miner's, and users' queries still reach the miners.
 */
describe("Tasks and the users' reserve of the miners' budgets", () => {
  let network: TestNetwork;
  let dataDir: string;
  let app: TestApp;

  beforeAll(async () => {
    network = await startTestNetwork(2);
    dataDir = mkdtempSync(join(tmpdir(), 'gateway-reserve-'));
    app = await startTestApp(
      {
        ...network.env,
        DATA_DIR: dataDir,
        ON_DEMAND_MODE: 'live',
        QUERY_MINERS: '2',
        QUERY_QUORUM: '2',
        QUERY_CACHE_TTL_SECONDS: '0',
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
    network.devnet.miners.map((miner) => network.devnet.requestCounts(miner.uid).OnDemandRequest);

  it("takes no more than the tasks' share of each miner's calls, and users get the rest", async () => {
    for (let index = 0; index < TASKS; index++)
      await registerTask(app.app, '5ValidatorHotkeyForReserve', `reserve-${index}`, '#bitcoin');

    expect(await app.app.get(TaskLifecycleService).collectDue(TASKS)).toBe(TASKS);
    expect(onDemandCalls()).toEqual([4, 4]);

    for (let query = 0; query < 4; query++) {
      const answer = await app.http
        .post('/api/v1/on_demand_data_request')
        .set('X-API-Key', TEST_MASTER_KEY)
        .send({ source: 'x', keywords: ['#bitcoin'] })
        .expect(200);
      expect(answer.body).toMatchObject({ status: 'success', meta: { origin: 'live' } });
    }
    expect(onDemandCalls()).toEqual([8, 8]);
  });
});

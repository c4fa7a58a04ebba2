import { setTimeout as sleep } from 'node:timers/promises';
import { syncIndexNow } from '../support/index-sync';
import { startTestNetwork, TestNetwork } from '../support/network';
import { systemStatus } from '../support/system-status';
import { startTestApp, TestApp } from '../support/test-app';

/**
 * The statistics read the miners' index: system-status says whether it is loaded and how fresh
 * it is, so that "nothing loaded yet" is not read as "the network holds nothing".
 */
describe("The miners' data index in system-status", () => {
  let network: TestNetwork;
  let app: TestApp;

  beforeAll(async () => {
    network = await startTestNetwork(3);
    // Its own database: no index was ever synced into it (and the app syncs only when asked).
    app = await startTestApp(
      { ...network.env, INDEX_SYNC_ON_START: 'false' },
      { ownDatabase: true },
    );
  });
  afterAll(async () => {
    await app.close();
    await network.stop();
  });

  it('is degraded with none loaded before any sync, and healthy with the sync times after one', async () => {
    const before = await systemStatus(app);
    expect(before.status).toBe('degraded');
    expect(before.components.miner_index).toEqual({
      status: 'degraded',
      latency_ms: expect.any(Number),
      loaded: 0,
      newest_synced_at: null,
      oldest_synced_at: null,
      last_read_at: null,
      error: expect.stringMatching(
        /^no miner's index is loaded \(no index sync has read one yet\)/,
      ),
    });

    const syncStarted = Date.now();
    expect(await syncIndexNow(app)).toMatchObject({ miners: 3, synced: 3 });
    const syncEnded = Date.now();
    await sleep(1100); // past the checks' 1 s cache

    const after = await systemStatus(app);
    expect(after.components.miner_index).toEqual({
      status: 'healthy',
      latency_ms: expect.any(Number),
      loaded: 3,
      newest_synced_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      oldest_synced_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      last_read_at: after.components.miner_index.newest_synced_at,
    });
    const newest = Date.parse(after.components.miner_index.newest_synced_at!);
    const oldest = Date.parse(after.components.miner_index.oldest_synced_at!);
    expect(oldest).toBeLessThanOrEqual(newest);
    // Postgres' clock and this process' are the same machine's (a little slack for rounding).
    expect(oldest).toBeGreaterThanOrEqual(syncStarted - 50);
    expect(newest).toBeLessThanOrEqual(syncEnded + 50);
    // Nothing else is wrong with this gateway: the index was all that kept it degraded.
    expect(after.status).toBe('healthy');
  });
});

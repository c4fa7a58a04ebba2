import { setTimeout as sleep } from 'node:timers/promises';
import { syncIndexNow } from '../support/index-sync';
import { startTestNetwork, TestNetwork } from '../support/network';
import { NetworkService } from '../../src/network/network.service';
import { systemStatus } from '../support/system-status';
import { startTestApp, TEST_MASTER_KEY, TestApp } from '../support/test-app';
import { until } from '../support/until';

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
      usable: 0,
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
      usable: 3,
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

/**
 * What the stored-data path calls "not loaded" is no index it may use: one held by a miner it may
 * ask now. Indexes held only by miners whose circuits are open made on-demand answer "The miners'
 * data index is not loaded yet" while system-status said the index healthy (an operator reading
 * it to diagnose that error was misled); it now says the same as the stored path, and on-demand
 * says the indexes are loaded and why none of their holders can be asked.
 */
describe("The miners' data index in system-status, once every miner holding one fails", () => {
  let network: TestNetwork;
  let app: TestApp;

  beforeAll(async () => {
    network = await startTestNetwork([{}, {}, {}], 7, undefined, { storedOnly: true });
    app = await startTestApp(
      {
        ...network.env,
        INDEX_SYNC_ON_START: 'false',
        ON_DEMAND_MODE: 'stored',
        QUERY_CACHE_TTL_SECONDS: '0',
        INDEX_SPOT_CHECKS: '0',
        // One failed call opens a miner's circuit, for longer than the test.
        MINER_BREAKER_FAILURES: '1',
        MINER_BREAKER_COOLDOWN_MS: '600000',
      },
      { ownDatabase: true },
    );
    expect(await syncIndexNow(app)).toMatchObject({ miners: 3, synced: 3 });
  });
  afterAll(async () => {
    await app?.close();
    await network?.stop();
  });

  const query = (keyword: string) =>
    app.http
      .post('/api/v1/on_demand_data_request')
      .set('X-API-Key', TEST_MASTER_KEY)
      .send({ source: 'X', keywords: [keyword], limit: 5 })
      .expect(200);

  it('is degraded with usable 0, saying why, while on-demand answers that no holder of an index can be asked', async () => {
    await sleep(1100); // past the checks' 1 s cache
    const synced = await systemStatus(app);
    expect(synced.components.miner_index).toMatchObject({
      status: 'healthy',
      loaded: 3,
      usable: 3,
    });

    for (const miner of network.devnet.miners)
      network.devnet.setBehaviour(miner.uid, { http500: true, noOnDemand: true });
    // Each labelled query calls the holders of its buckets; each failed call opens a circuit,
    // until no holder is left to ask and the stored path finds no usable index.
    const notLoaded = await until(async () => {
      for (const keyword of ['#bitcoin', '#ai', '#crypto', '#ethereum']) {
        const answer = await query(keyword);
        await app.app.get(NetworkService).settled();
        if (/no miner holding one can be asked now/.test(String(answer.body.meta.error)))
          return answer;
      }
      return undefined;
    }, 20_000);
    expect(notLoaded.body).toMatchObject({ status: 'error', meta: { origin: 'stored' } });
    // Not "not loaded yet", which sent the user to wait for the next index sync.
    expect(notLoaded.body.meta.error).toMatch(
      /^The miners' data index: the indexes of 3 miners are loaded, but no miner holding one can be asked now: 3 failing \(circuit open; the first cooldown ends at [^)]+\)\. Only data already stored by this gateway was searched, and none matched\.$/,
    );

    await sleep(1100);
    const failing = await systemStatus(app);
    expect(failing.status).toBe('degraded');
    expect(failing.components.miner_index).toEqual({
      status: 'degraded',
      latency_ms: expect.any(Number),
      loaded: 3,
      usable: 0,
      newest_synced_at: synced.components.miner_index.newest_synced_at,
      oldest_synced_at: synced.components.miner_index.oldest_synced_at,
      last_read_at: synced.components.miner_index.last_read_at,
      error: expect.stringMatching(
        /^the indexes of 3 miners are loaded, but none is usable now: 3 failing \(circuit open; the first cooldown ends at \d{4}-\d\d-\d\dT[\d:.]+Z\): on-demand answers from stored data say no miner holding one can be asked/,
      ),
    });
  });
});

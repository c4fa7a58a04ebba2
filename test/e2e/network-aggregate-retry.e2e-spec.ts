import { NOT_READY_RETRY_AFTER_SECONDS } from '../../src/common/errors/retry-later';
import { isLocal, recordConnections } from '../support/connections';
import { NetworkStandIns, startNetworkStandIns } from '../support/network-stand-ins';
import { startTestApp, TEST_MASTER_KEY, TestApp } from '../support/test-app';

interface NetworkStatus {
  computed_at?: string;
  last_attempt?: { ok: boolean; at: string; error?: string };
}

/**
 * The network's aggregate while its first read fails: the chain stand-in (the recorded finney
 * node, on 127.0.0.1) is silent, then answers. The sync interval is an hour: a failed read is
 * retried within seconds all the same (it spends no miner's call budget), and what the 503 and
 * `last_attempt` say of it is the `job_runs` row's, so a restarted gateway says it too.
 */
describe('The network’s aggregate before its first good read', () => {
  let standIns: NetworkStandIns;
  let app: TestApp | undefined;
  let connections: ReturnType<typeof recordConnections>;

  const start = async () =>
    (app = await startTestApp({
      DATABASE_URL: standIns.databaseUrl,
      SUBTENSOR_URL: standIns.replay.url,
      NETUID: '1',
      MINER_ALLOWED_NETWORKS: 'loopback',
      // Silent, the node fails each read after this; answering, it is reached within it.
      SUBTENSOR_TIMEOUT_MS: '5000',
      GRAVITY_REPO_URL: standIns.remote.url,
      GRAVITY_BRANCH: 'main',
      DESIRABILITY_SYNC_INTERVAL: '3600',
      DATA_DIR: standIns.dataDir,
    }));
  const get = (path: string) => app!.http.get(path).set('X-API-Key', TEST_MASTER_KEY);
  const networkStatus = async () =>
    (await get('/api/v1/desirabilities/network').expect(200)).body as NetworkStatus;
  const eventually = async <T>(read: () => Promise<T>, until: (value: T) => boolean) => {
    const deadline = Date.now() + 60_000;
    for (;;) {
      const value = await read();
      if (until(value)) return value;
      if (Date.now() > deadline) throw new Error(`not reached in time: ${JSON.stringify(value)}`);
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  };

  beforeAll(async () => {
    connections = recordConnections();
    standIns = await startNetworkStandIns('aggretry', 1);
    standIns.replay.mode = 'silent';
  }, 60_000);

  afterAll(async () => {
    await app?.close();
    await standIns?.stop();
    connections.stop();
  });

  it('answers 503 with the failed read’s reason, before and after a restart', async () => {
    await start();
    const failed = await eventually(networkStatus, (status) => status.last_attempt !== undefined);
    expect(failed.last_attempt).toEqual({
      ok: false,
      at: expect.any(String),
      error: expect.any(String),
    });
    const refused = await get('/api/v1/get_desirabilities').expect(503);
    expect(refused.body.detail).toBe(
      `The network's desirability aggregate has not been computed yet: ${failed.last_attempt!.error}`,
    );
    // Not loaded yet, and retried by the job within seconds: it said nothing of when to come back.
    expect(refused.headers['retry-after']).toBe(String(NOT_READY_RETRY_AFTER_SECONDS));
    const lookup = await get(
      '/api/v1/get_desirabilities?hotkey=5F4tQyWrhfGVcNhoqeiNsR6KjD4wMZ2kfhLj4oHYuyHbZAc3',
    ).expect(503);
    expect(lookup.body.detail).toMatch(/^The chain cannot be read now/);
    expect(lookup.headers['retry-after']).toBe(String(NOT_READY_RETRY_AFTER_SECONDS));

    await app!.close();
    app = undefined;
    await start();
    // At once: the row says how the last read ended, whichever process made it.
    const restarted = await networkStatus();
    expect(restarted.last_attempt).toMatchObject({ ok: false, error: expect.any(String) });
    expect((await get('/api/v1/get_desirabilities').expect(503)).body.detail).toMatch(
      /^The network's desirability aggregate has not been computed yet: /,
    );
  }, 60_000);

  it('retries a failed read within seconds, not at the next interval', async () => {
    standIns.replay.mode = 'answer';
    // The aggregate is stored before its run is recorded as ended (the job's row): between the
    // two, `computed_at` is there and `last_attempt` is still the failed one before (a loaded
    // CI run read it there). Both once the attempt has ended.
    const served = await eventually(
      networkStatus,
      (status) => status.computed_at !== undefined && status.last_attempt?.ok === true,
    );
    expect(served.last_attempt).toMatchObject({ ok: true });
    await get('/api/v1/get_desirabilities').expect(200);
  }, 90_000);

  it('never connected outside the machine', () => {
    expect(connections.destinations.filter((destination) => !isLocal(destination))).toEqual([]);
  });
});

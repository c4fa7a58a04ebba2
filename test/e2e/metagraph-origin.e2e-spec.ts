import { rename } from 'node:fs/promises';
import { freePort } from '../../bench/support/ports';
import { IndexSyncService } from '../../src/network/index-sync/index-sync.service';
import { NetworkService } from '../../src/network/network.service';
import { isLocal, recordConnections } from '../support/connections';
import { createDatabase, dropDatabase, scratchDatabaseName } from '../support/database';
import { createKey } from '../support/fixtures';
import { startTestNetwork, TestNetwork } from '../support/network';
import { systemStatus } from '../support/system-status';
import { startTestApp, TEST_MASTER_KEY, TestApp } from '../support/test-app';

const ENDPOINT = '/api/v1/on_demand_data_request';
const SETTINGS = { QUERY_CACHE_TTL_SECONDS: '0', INDEX_SPOT_CHECKS: '0' };

/**
 * A database whose stored metagraph came from one source (a devnet's metagraph file), restarted
 * with another that cannot be read (a node on a loopback port nobody listens on): the file's
 * miners are not the configured source's, so they are not used (docs/decisions.md, "The
 * metagraph from the chain"). The same source, unreadable, keeps them.
 */
describe('A stored metagraph from another source than the configured one', () => {
  const serverUrl = () => process.env.TEST_RUN_SERVER_URL!;
  const databaseName = scratchDatabaseName('origin');
  let databaseUrl: string;
  let network: TestNetwork;
  let connections: ReturnType<typeof recordConnections>;

  const callsReceived = () =>
    network.devnet.miners.flatMap((miner) => network.devnet.calls(miner.uid));
  const minerPorts = () =>
    new Set(network.devnet.miners.map((miner) => Number(new URL(miner.url).port)));
  const query = (app: TestApp, key = TEST_MASTER_KEY) =>
    app.http
      .post(ENDPOINT)
      .set('X-API-Key', key)
      .send({ source: 'X', keywords: ['#bitcoin'] })
      .expect(200);

  beforeAll(async () => {
    connections = recordConnections();
    network = await startTestNetwork(3);
    databaseUrl = await createDatabase(serverUrl(), databaseName);
    // The file's metagraph stored, and the miners' indexes with it (for the stored-data path).
    const first = await startTestApp({ ...network.env, ...SETTINGS, DATABASE_URL: databaseUrl });
    try {
      await first.app.get(IndexSyncService).runIfDue();
      await first.app.get(NetworkService).settled();
    } finally {
      await first.close();
    }
  }, 60_000);
  afterAll(async () => {
    await network?.stop();
    await dropDatabase(serverUrl(), databaseName);
    connections.stop();
  });

  it.each(['auto', 'stored'])(
    'calls none of its miners on a node that cannot be read (ON_DEMAND_MODE=%s), and says why',
    async (mode) => {
      const node = `ws://127.0.0.1:${await freePort()}`;
      network.devnet.resetCounts();
      const dialled = connections.destinations.length;
      const app = await startTestApp({
        ...SETTINGS,
        DATABASE_URL: databaseUrl,
        SUBTENSOR_URL: node,
        NETUID: '13',
        SUBTENSOR_TIMEOUT_MS: '500',
        ON_DEMAND_MODE: mode,
      });
      try {
        // A regular key's holder is told what kind of problem it is, not where the metagraph
        // came from or which node is configured (system-status, below, has those).
        const { key } = await createKey(app);
        const answer = await query(app, key);
        expect(answer.body.status).toBe('error');
        expect(answer.body.data ?? []).toEqual([]);
        expect(answer.body.meta.error).toMatch(
          /^No miners available: the stored metagraph is not from the configured source/,
        );
        // The index still lists the file's miners as holders of the hour: none is asked.
        const bucket = await app.http
          .get('/api/v1/query_bucket/x')
          .set('X-API-Key', key)
          .expect(200);
        expect(bucket.body.status).toBe('error');
        for (const body of [answer.body, bucket.body]) {
          const text = JSON.stringify(body);
          expect(text).not.toContain(network.devnet.metagraphFile);
          expect(text).not.toContain(new URL(node).host);
        }
        await app.app.get(IndexSyncService).runIfDue();
        await app.app.get(NetworkService).settled();

        const status = await systemStatus(app);
        expect(status.network).toBeNull();
        expect(status.components.miners).toMatchObject({
          status: 'degraded',
          total: 0,
          available: 0,
          error: expect.stringMatching(
            new RegExp(
              `stored metagraph .*file ${network.devnet.metagraphFile}.* is not from the configured source \\(subtensor ${node} netuid 13\\)`,
            ),
          ),
        });
        const list = await app.http
          .get('/api/v1/miners')
          .set('X-API-Key', TEST_MASTER_KEY)
          .expect(200);
        expect(list.body).toMatchObject({ block: null, source: null, miners: [] });

        expect(callsReceived()).toEqual([]);
        const since = connections.destinations.slice(dialled);
        expect(since.filter((destination) => !isLocal(destination))).toEqual([]);
        expect(since.filter((destination) => minerPorts().has(destination.port!))).toEqual([]);
      } finally {
        await app.close();
      }
    },
  );

  it('keeps its miners on a restart with the same source, even while it cannot be read', async () => {
    const file = network.devnet.metagraphFile!;
    await rename(file, `${file}.aside`);
    network.devnet.resetCounts();
    try {
      const app = await startTestApp({
        ...network.env,
        ...SETTINGS,
        DATABASE_URL: databaseUrl,
        MINER_CALL_BUDGETS: 'OnDemandRequest=none',
      });
      try {
        const status = await systemStatus(app);
        expect(status.network).toBe('devnet');
        expect(status.components.miners).toMatchObject({
          total: network.devnet.metagraph.neurons.length,
        });
        const answer = await query(app);
        expect(answer.body.status).toBe('success');
        expect(callsReceived().length).toBeGreaterThan(0);
      } finally {
        await app.close();
      }
    } finally {
      await rename(`${file}.aside`, file);
    }
  });
});

import { DataSource } from 'typeorm';
import { IndexSyncService } from '../../src/network/index-sync/index-sync.service';
import { MetagraphService } from '../../src/network/metagraph/metagraph.service';
import { NetworkService } from '../../src/network/network.service';
import { systemStatus } from '../support/system-status';
import { ChainReplay, startChainReplay } from '../support/chain-replay';
import { isLocal, recordConnections } from '../support/connections';
import { createDatabase, dropDatabase, scratchDatabaseName } from '../support/database';
import { startTestApp, TEST_MASTER_KEY, TestApp } from '../support/test-app';

/**
 * The gateway reading subnet 1's metagraph from a subtensor node: the recorded finney answers,
 * replayed on 127.0.0.1. The recording lists public addresses of real machines; the gateway
 * may call loopback only, and every connection this process opens is checked.
 */
/** Finney's genesis hash, as the replayed node answers it. */
const FINNEY_GENESIS = '0x2f0555cc76fc2840a25a6ea3b9637146806f1f44b090c175ffde2a7e5ab36c03';
const UID0_HOTKEY = '5DkMmXtWf16RNdusZGCrJ7ca7ADPgRnZLVWCWbgA7s7sy1AQ';
/** Neurons of the recording with a validator permit; uid 496 has 5,770 TAO, under 10,000. */
const PERMITS = 12;
const LOW_STAKE_UID = 496;

interface MinerList {
  block: number | null;
  source: string | null;
  miners: {
    uid: number;
    hotkey: string;
    axon: string | null;
    stake: number | null;
    state: string;
    validator_permit: boolean;
    call_budget_left: Record<string, number | null>;
  }[];
}

describe('The metagraph from a subtensor node', () => {
  const serverUrl = () => process.env.TEST_RUN_SERVER_URL!;
  const databaseName = scratchDatabaseName('chain');
  let databaseUrl: string;
  let replay: ChainReplay;
  let app: TestApp;
  let connections: ReturnType<typeof recordConnections>;

  const chainEnv = () => ({
    DATABASE_URL: databaseUrl,
    SUBTENSOR_URL: replay.url,
    NETUID: '1',
    MINER_ALLOWED_NETWORKS: 'loopback',
    // The replay always answers here, but a read of 1,024 neurons takes seconds under jest, and
    // more on a loaded machine. The silent node is another app's, with a short bound.
    SUBTENSOR_TIMEOUT_MS: '60000',
  });
  const listMiners = async (query = ''): Promise<MinerList> =>
    (await app.http.get(`/api/v1/miners${query}`).set('X-API-Key', TEST_MASTER_KEY).expect(200))
      .body as MinerList;
  /** Past the 1 s cache of the health checks. */
  const afterCheckCache = () => new Promise((resolve) => setTimeout(resolve, 1100));

  beforeAll(async () => {
    connections = recordConnections();
    databaseUrl = await createDatabase(serverUrl(), databaseName);
    replay = await startChainReplay();
    app = await startTestApp(chainEnv());
  }, 120_000);
  afterAll(async () => {
    await app?.close();
    await replay?.stop();
    await dropDatabase(serverUrl(), databaseName);
    connections.stop();
  });

  it('lists the 1,024 neurons of netuid 1 as the chain has them', async () => {
    const list = await listMiners();
    expect(list.block).toBe(6_852_690);
    expect(list.source).toBe(`subtensor ${replay.url} netuid 1`);
    expect(list.miners).toHaveLength(1024);
    expect(list.miners.map((miner) => miner.uid)).toEqual([...Array(1024).keys()]);
    expect(list.miners[0]).toMatchObject({
      uid: 0,
      hotkey: UID0_HOTKEY,
      axon: '192.222.59.109:6028',
      validator_permit: false,
      // Public addresses, and this gateway may call loopback only.
      state: 'address_refused',
      // The default budgets beside a validator on the same hotkey (VALIDATOR_SHARES_HOTKEY).
      call_budget_left: {
        GetMinerIndex: 1,
        GetDataEntityBucket: 1,
        GetContentsByBuckets: 8,
        OnDemandRequest: 8,
      },
    });
    expect(list.miners.filter((miner) => miner.axon !== null)).toHaveLength(827);
    expect(list.miners.filter((miner) => miner.validator_permit)).toHaveLength(PERMITS);
    // Total stake (the replay refuses the 7-field mechagraph: get_neurons_lite and
    // get_subnet_state are read), not get_neurons_lite's own 960 TAO.
    expect(list.miners[24].stake).toBeCloseTo(58_036.81, 2);
  });

  it('counts a permit holder under 10,000 α of stake weight as a miner, as subnet 13 does', async () => {
    const validators = (await listMiners('?state=validator')).miners;
    expect(validators).toHaveLength(PERMITS - 1);
    expect(validators.every((miner) => miner.stake! >= 10_000)).toBe(true);
    const [lowStake] = (await listMiners(`?uid=${LOW_STAKE_UID}`)).miners;
    expect(lowStake).toMatchObject({ validator_permit: true, stake: expect.closeTo(5_770.07, 2) });
    expect(lowStake.state).not.toBe('validator');
    // Only validators vote: the stakes that weigh the aggregate leave it out.
    const stakes = app.app.get(NetworkService).validatorStakes();
    expect(stakes.size).toBe(PERMITS - 1);
    expect(stakes.has(lowStake.hotkey)).toBe(false);
  });

  it('filters by state and uid, and refuses an unknown state', async () => {
    expect((await listMiners('?state=validator')).miners).toHaveLength(PERMITS - 1);
    const [only] = (await listMiners('?uid=0')).miners;
    expect(only.hotkey).toBe(UID0_HOTKEY);
    expect((await listMiners('?uid=0&state=validator')).miners).toEqual([]);
    const refused = await app.http
      .get('/api/v1/miners?state=asleep')
      .set('X-API-Key', TEST_MASTER_KEY)
      .expect(422);
    expect(refused.body.detail[0]).toMatchObject({ loc: ['query', 'state'] });
  });

  it('is for the master key only', async () => {
    await app.http.get('/api/v1/miners').expect(401);
  });

  it('reports the chain and the miners in system-status', async () => {
    const status = await systemStatus(app);
    expect(status.network).toBe('subtensor');
    expect(status.components.chain).toMatchObject({
      status: 'healthy',
      block: 6_852_690,
      age_seconds: expect.any(Number),
    });
    expect(status.components.miners).toMatchObject({
      total: 1024,
      serving: 827,
      validators: PERMITS - 1,
      available: 0,
      address_refused: expect.any(Number),
      // The test apps' hotkey is no neuron of the recording.
      hotkey_standing: 'not_registered',
    });
  });

  // A reset testnet or local node serves a new chain behind the same address, from block 0: it
  // was refused as lagging behind the old chain's higher block, until it passed that block.
  it("applies a read over a stored metagraph of another chain at a higher block, not of the node's own", async () => {
    const metagraph = app.app.get(MetagraphService);
    expect((await metagraph.status()).stored).toMatchObject({ genesisHash: FINNEY_GENESIS });
    const storedAt = (block: number, genesis: string) =>
      app.app
        .get(DataSource)
        .query('UPDATE metagraph_state SET block = $1, genesis_hash = $2 WHERE id = 1', [
          block,
          genesis,
        ]);

    try {
      await storedAt(7_000_000, FINNEY_GENESIS);
      await metagraph.sync();
      expect((await metagraph.status()).lastAttempt).toMatchObject({
        ok: false,
        error: expect.stringMatching(/block 6852690 is older .* of the same chain .* lags behind/),
      });
      expect((await listMiners()).block).toBe(7_000_000);

      await storedAt(7_000_000, `0x${'00'.repeat(32)}`);
      await metagraph.sync();
      expect((await metagraph.status()).lastAttempt).toMatchObject({ ok: true });
      expect((await metagraph.status()).stored).toMatchObject({
        block: 6_852_690,
        genesisHash: FINNEY_GENESIS,
      });
      expect((await listMiners()).miners).toHaveLength(1024);
    } finally {
      // The tests after this one read the recording's block.
      await storedAt(6_852_690, FINNEY_GENESIS);
    }
  });

  it('never connects to an address from the recording', async () => {
    // Everything that would call miners: an on-demand query and an index sync.
    await app.http
      .post('/api/v1/on_demand_data_request')
      .set('X-API-Key', TEST_MASTER_KEY)
      .send({ source: 'x', keywords: ['#bitcoin'] })
      .expect(200);
    await app.app.get(IndexSyncService).runIfDue();
    expect(connections.destinations.length).toBeGreaterThan(0);
    expect(connections.destinations.filter((destination) => !isLocal(destination))).toEqual([]);
  });

  describe('a node that fails', () => {
    const syncAndExpectKept = async () => {
      await app.app.get(MetagraphService).sync();
      return expectKept();
    };
    const expectKept = async () => {
      expect((await listMiners()).miners).toHaveLength(1024);
      await afterCheckCache();
      const status = await systemStatus(app);
      expect(status.status).toBe('degraded');
      expect(status.components.chain).toMatchObject({
        status: 'degraded',
        block: 6_852_690,
        error: expect.any(String),
      });
      return status.components.chain;
    };
    afterEach(() => {
      replay.mode = 'answer';
    });

    it('keeps the last metagraph when the node stops answering', async () => {
      // An app of its own, on the same database, whose node never answers: a short bound is
      // waited out every time (the shared app's is generous, for reads on a loaded machine).
      const shared = app;
      replay.mode = 'silent';
      try {
        app = await startTestApp({ ...chainEnv(), SUBTENSOR_TIMEOUT_MS: '1000' });
        try {
          const chain = await expectKept();
          expect(chain.error).toMatch(/could not connect within 1000 ms/);
        } finally {
          await app.close();
        }
      } finally {
        app = shared;
      }
    });

    it('keeps the last metagraph when the node answers garbage', async () => {
      replay.mode = 'garbage';
      await syncAndExpectKept();
    });

    it('refuses an empty metagraph as suspicious', async () => {
      replay.mode = 'empty';
      const chain = await syncAndExpectKept();
      expect(chain.error).toMatch(/suspicious: it would deregister 1024 of 1024/);
    });

    it('reconnects after the node dropped the connection, and is healthy again', async () => {
      replay.dropConnections();
      await app.app.get(MetagraphService).sync();
      await afterCheckCache();
      expect((await systemStatus(app)).components.chain).toMatchObject({ status: 'healthy' });
    });
  });

  // Last before the restart: the app's reader remembers the refusal for this runtime.
  it('stores stakes as unknown when the node gives no total stake', async () => {
    replay.refusedCalls.add('SubnetInfoRuntimeApi_get_subnet_state');
    try {
      await app.app.get(MetagraphService).sync();
      const list = await listMiners();
      expect(list.miners).toHaveLength(1024);
      expect(list.miners.filter((miner) => miner.stake !== null)).toEqual([]);
      // Stakes unknown: the permit decides (docs/decisions.md, "The metagraph from the chain").
      expect((await listMiners('?state=validator')).miners).toHaveLength(PERMITS);
    } finally {
      replay.refusedCalls.clear();
    }
  });

  it('serves the stored metagraph after a restart while the node is down', async () => {
    await app.close();
    replay.mode = 'silent';
    try {
      app = await startTestApp({ ...chainEnv(), SUBTENSOR_TIMEOUT_MS: '500' });
      const list = await listMiners();
      expect(list.miners).toHaveLength(1024);
      expect(list.block).toBe(6_852_690);
      expect((await systemStatus(app)).components.chain).toMatchObject({
        status: 'degraded',
        block: 6_852_690,
        last_read_at: expect.any(String),
      });
    } finally {
      replay.mode = 'answer';
    }
  });
});

import { NetworkService } from '../../src/network/network.service';
import { startTestNetwork, TestNetwork } from '../support/network';
import { startTestApp, TEST_MASTER_KEY, TestApp, testValidatorHotkey } from '../support/test-app';

const ENDPOINT = '/api/v1/on_demand_data_request';
const QUERIES = 10;

/**
 * Identical on-demand queries arriving together each missed the cache and each fanned out: ten
 * made each miner's OnDemandRequest calls [8, 8, 8], the gateway's whole hourly budget (shared
 * with the validator on the hotkey), instead of one (a review's finding). An identical query in
 * flight is joined now (docs/decisions.md, "Identical queries in flight").
 */
describe('Identical on-demand queries in flight', () => {
  let network: TestNetwork;
  let app: TestApp;

  beforeAll(async () => {
    // Miners slow enough that every query arrives while the first is still asking them.
    network = await startTestNetwork(
      [300, 300, 300].map((latencyMs) => ({ behaviour: { latencyMs } })),
    );
    app = await startTestApp(
      { ...network.env, QUERY_MINERS: '3', QUERY_QUORUM: '3' },
      { ownDatabase: true },
    );
  });
  afterAll(async () => {
    await app?.close();
    await network?.stop();
  });

  it('ask each miner once, and answer the joiners alike, as cache hits', async () => {
    const body = { source: 'x', keywords: ['#bitcoin'] };
    const answers = await Promise.all(
      Array.from({ length: QUERIES }, () =>
        app.http.post(ENDPOINT).set('X-API-Key', TEST_MASTER_KEY).send(body).expect(200),
      ),
    );
    await app.app.get(NetworkService).settled();

    const gateway = testValidatorHotkey();
    const callsPerMiner = network.devnet.miners.map(
      (miner) =>
        network.devnet
          .calls(miner.uid)
          .filter((call) => call.synapse === 'OnDemandRequest' && call.caller === gateway).length,
    );
    expect(callsPerMiner).toEqual([1, 1, 1]);
    const hits = answers.map((answer) => answer.body.meta.cache_hit as boolean);
    expect(hits.filter((hit) => !hit)).toHaveLength(1);
    for (const answer of answers) {
      expect(answer.body).toMatchObject({ status: 'success', meta: { miners_responded: 3 } });
      expect(answer.body.data).toEqual(answers[0].body.data);
    }
  }, 60_000);
});

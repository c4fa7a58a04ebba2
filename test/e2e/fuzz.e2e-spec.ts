import { FUZZ_APP_ENV, FuzzCampaign } from '../../bench/support/fuzz/campaign';
import { startTestNetwork, TestNetwork } from '../support/network';
import { startTestApp, TEST_MASTER_KEY, TestApp } from '../support/test-app';

/** A sample of `npm run bench:fuzz` (10,000+ cases): set FUZZ_RUNS / FUZZ_SEED to vary it. */
const RUNS = Number(process.env.FUZZ_RUNS ?? 300);
const SEED = Number(process.env.FUZZ_SEED ?? 20261122);

describe('fuzzing every operation against /openapi.json', () => {
  let network: TestNetwork;
  let app: TestApp;
  let campaign: FuzzCampaign;

  beforeAll(async () => {
    network = await startTestNetwork(5);
    app = await startTestApp({ ...network.env, ...FUZZ_APP_ENV }, { ownDatabase: true });
    campaign = await FuzzCampaign.prepare(app.url, TEST_MASTER_KEY);
  });

  afterAll(async () => {
    campaign?.close();
    await app?.close();
    await network?.stop();
  });

  it(`answers ${RUNS} random requests with documented statuses and valid bodies`, async () => {
    const result = await campaign.run({ numRuns: RUNS, seed: SEED, mode: 'assert' });
    // fast-check's report names the seed and path that replay the shrunk failing case.
    if (result.report) throw new Error(`${result.report}\n${JSON.stringify(result.failures[0])}`);
    expect(result.failures).toEqual([]);
    expect(result.cases).toBe(RUNS);
    // Every operation was reached, and the sample got past validation into the services.
    expect([...result.perTarget.keys()].length).toBe(campaign.operations.length + 1);
    expect(result.statuses.get('200')).toBeGreaterThan(RUNS / 10);
    await app.http.get('/api/v1/health').set('X-API-Key', TEST_MASTER_KEY).expect(200);
  }, 120_000);
});

import { DataSource } from 'typeorm';
import { Clock } from '../../src/common/clock/clock';
import { callAxon } from '../../src/devnet/axon-client';
import { CALL_LIMITS, CALL_WINDOW_MS } from '../../src/devnet/call-limits';
import { ReceivedCall } from '../../src/devnet/miner-server';
import { Sr25519Keypair } from '../../src/network/bittensor/keypair';
import { IndexSyncReport } from '../../src/network/index-sync/index-sync.service';
import { NetworkService } from '../../src/network/network.service';
import { SynapseName } from '../../src/common/synapse-names';
import { startTestNetwork, TestNetwork } from '../support/network';
import {
  startTestApp,
  TEST_MASTER_KEY,
  TEST_VALIDATOR_URI,
  TestApp,
  testValidatorHotkey,
} from '../support/test-app';
import { syncIndexNow } from '../support/index-sync';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const STORED: SynapseName[] = ['GetMinerIndex', 'GetDataEntityBucket', 'GetContentsByBuckets'];

interface BucketAnswer {
  status: 'success' | 'error';
  cached?: boolean;
  fetched_at?: string;
  message?: string;
}

interface MinerListing {
  uid: number;
  call_budget_left: Record<SynapseName, number | null>;
}

async function listMiners(app: TestApp): Promise<MinerListing[]> {
  const answer = await app.http.get('/api/v1/miners').set('X-API-Key', TEST_MASTER_KEY).expect(200);
  return (answer.body as { miners: MinerListing[] }).miners;
}

/**
 * The hotkey's calls per miner window and synapse. A miner's window starts at its start, and
 * again at the first call an hour or more after the last start (neurons/miner.py
 * default_blacklist), whoever sends it: `calls` are all the miner received, in order.
 */
function perWindow(
  calls: readonly ReceivedCall[],
  start: number,
  hotkey: string,
): Map<string, number> {
  const counts = new Map<string, number>();
  let windowStart = start;
  let window = 0;
  for (const call of calls) {
    if (call.at - windowStart >= CALL_WINDOW_MS) {
      windowStart = call.at;
      window += 1;
    }
    if (call.caller !== hotkey) continue;
    const key = `${window}|${call.synapse}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return counts;
}

/**
 * The gateway beside the subnet's validator, both signing with one hotkey (the default,
 * VALIDATOR_SHARES_HOTKEY=true). Miners allow that hotkey 2 GetMinerIndex and 2
 * GetDataEntityBucket per window (an hour or more: see perWindow) and refuse more with 403; the
 * validator evaluates each miner once an hour with one of each. Over a simulated hour and
 * sixteen minutes (the gateway's and the devnet's clocks moved together), index syncs with spot
 * checks and query_bucket requests keep running: the gateway must leave the validator its calls, so
 * that neither is ever refused.
 */
describe('Call budgets shared with a validator on the same hotkey', () => {
  let network: TestNetwork;
  let app: TestApp;
  let devnetStart: number;
  let offset = 0;
  const validator = Sr25519Keypair.fromUri(TEST_VALIDATOR_URI);
  const validatorStatuses: number[] = [];
  /** The calls the miners received from the validator (the gateway was idle meanwhile). */
  const validatorCalls = new Set<ReceivedCall>();
  const reports: { minute: number; report: IndexSyncReport }[] = [];
  const buckets: { minute: number; answer: BucketAnswer }[] = [];

  /** The validator's evaluation of every miner: one index and one bucket call, as it does. */
  async function evaluate(): Promise<void> {
    for (const miner of network.devnet.miners) {
      const call = (synapse: string, fields: Record<string, unknown>) =>
        callAxon({
          url: miner.url,
          hotkey: miner.hotkey,
          synapse,
          fields,
          signer: validator,
          nowMs: Date.now() + offset,
        });
      const bucket = {
        time_bucket: { id: Math.floor((Date.now() + offset) / HOUR) - 1 },
        source: 2,
        label: { value: '#bitcoin' },
      };
      for (const [synapse, fields] of [
        ['GetMinerIndex', { version: 4 }],
        ['GetDataEntityBucket', { version: 4, data_entity_bucket_id: bucket }],
      ] as const) {
        validatorStatuses.push((await call(synapse, fields)).status);
        validatorCalls.add(network.devnet.calls(miner.uid).at(-1)!);
      }
    }
  }

  beforeAll(async () => {
    devnetStart = Date.now();
    network = await startTestNetwork(3);
    // A spot check takes the miner's only bucket call of the hour: one, so that query_bucket
    // finds the other miners' calls (in a real subnet, 5 checks leave hundreds of miners).
    // Users may take every bucket call the spot checks leave (no reserve): what is held to the
    // budget here is the validator's share, not the spot checks'.
    app = await startTestApp(
      { ...network.env, INDEX_SPOT_CHECKS: '1', INDEX_SPOT_CHECK_RESERVE: '0' },
      { ownDatabase: true },
    );
    const queryBucket = async (path: string) =>
      (await app.http.get(path).set('X-API-Key', TEST_MASTER_KEY).expect(200)).body as BucketAnswer;
    // The index call frees up an hour and the margin (5 minutes) after the first sync: not
    // minute 60, where the sync would wait (in real time) for it, but 66.
    let minute = 0;
    for (const next of [0, 10, 20, 30, 40, 66, 76]) {
      if (next > minute) {
        app.app.get(Clock).advance((next - minute) * MINUTE);
        network.devnet.advanceClock((next - minute) * MINUTE);
        offset += (next - minute) * MINUTE;
        minute = next;
      }
      // The job runs once per interval; the test runs it at every step of simulated time.
      reports.push({ minute, report: await syncIndexNow(app) });
      for (const path of [
        'query_bucket/x?label=%23bitcoin',
        'query_bucket/reddit',
        'query_bucket/x',
      ])
        buckets.push({ minute, answer: await queryBucket(`/api/v1/${path}`) });
      await app.app.get(NetworkService).settled();
      // The validator evaluates once in each of the miners' windows (the second starts at 66).
      if (minute === 30 || minute === 76) await evaluate();
    }
  }, 120_000);

  afterAll(async () => {
    await app.close();
    await network.stop();
  });

  it('leaves the validator its calls: no miner ever refuses the hotkey, the gateway or the validator', () => {
    expect(validatorStatuses).toHaveLength(2 * 2 * 3);
    expect(validatorStatuses.every((status) => status === 200)).toBe(true);
    const hotkey = testValidatorHotkey();
    for (const miner of network.devnet.miners) {
      const calls = network.devnet.calls(miner.uid).filter((call) => call.caller === hotkey);
      expect(calls.filter((call) => call.status !== 200)).toEqual([]);
      for (const synapse of STORED)
        expect(network.devnet.callCounts(miner.uid)[synapse].refused).toBe(0);
      // Within the miners' own limits in each of their hours, the validator's calls included.
      const all = network.devnet.calls(miner.uid);
      for (const [key, count] of perWindow(all, devnetStart, hotkey)) {
        const synapse = key.split('|')[1] as SynapseName;
        expect(count).toBeLessThanOrEqual(CALL_LIMITS[synapse]!);
      }
    }
  });

  it('takes one index and at most one bucket call of each miner in any hour', () => {
    for (const miner of network.devnet.miners) {
      const ours = network.devnet
        .calls(miner.uid)
        .filter((call) => call.caller === testValidatorHotkey() && !validatorCalls.has(call));
      for (const synapse of ['GetMinerIndex', 'GetDataEntityBucket']) {
        const times = ours.filter((call) => call.synapse === synapse).map((call) => call.at);
        for (const start of times) {
          const inHour = times.filter((at) => at >= start && at < start + HOUR);
          expect(inHour.length).toBeLessThanOrEqual(1);
        }
      }
      // The budget was the limit: each miner got its index call in the first hour, and again.
      expect(ours.filter((call) => call.synapse === 'GetMinerIndex')).toHaveLength(2);
    }
  });

  it('syncs every miner once an hour and the margin, skipping the syncs in between for want of budget', () => {
    expect(reports.map(({ minute }) => minute)).toEqual([0, 10, 20, 30, 40, 66, 76]);
    expect(reports[0].report).toMatchObject({ synced: 3, skipped: 0 });
    expect(reports[0].report.spotChecks).toHaveLength(1);
    for (const { report } of reports.filter(({ minute }) => minute > 0 && minute < 66))
      expect(report).toMatchObject({ synced: 0, skipped: 3, skippedReasons: { no_budget: 3 } });
    expect(reports.find(({ minute }) => minute === 66)?.report).toMatchObject({ synced: 3 });
    expect(reports.find(({ minute }) => minute === 76)?.report).toMatchObject({ synced: 0 });
  });

  it('answers query_bucket from what was fetched before when it may not call', () => {
    const answered = buckets.filter(({ answer }) => answer.status === 'success');
    expect(answered.some(({ answer }) => answer.cached === false)).toBe(true);
    const cached = answered.filter(({ answer }) => answer.cached === true);
    expect(cached.length).toBeGreaterThan(0);
    for (const { answer } of cached) expect(Date.parse(answer.fetched_at!)).not.toBeNaN();
    for (const { answer } of buckets.filter(({ answer }) => answer.status === 'error'))
      expect(answer.message).toMatch(/may be asked for it|still sending/);
  });
});

/**
 * Beside a validator each miner allows the gateway one GetDataEntityBucket an hour, which the
 * index spot checks and users' query_bucket both take. However many buckets users ask for,
 * query_bucket leaves the spot checks their share of the miners (INDEX_SPOT_CHECK_RESERVE, half):
 * a key's requests must not switch the checks off network-wide.
 */
describe("The spot checks' share of the bucket calls", () => {
  let network: TestNetwork;
  let app: TestApp;

  beforeAll(async () => {
    network = await startTestNetwork(6);
    app = await startTestApp({ ...network.env, INDEX_SPOT_CHECKS: '1' }, { ownDatabase: true });
  });
  afterAll(async () => {
    await app.close();
    await network.stop();
  });

  it('leaves half the miners their call however many buckets query_bucket is asked for, and says why it fetches none', async () => {
    const report = await syncIndexNow(app);
    expect(report).toMatchObject({ synced: 6 });
    expect(report.spotChecks).toHaveLength(1);
    const hours = await app.app
      .get(DataSource)
      .query<{ hour: number }[]>(
        'SELECT DISTINCT time_bucket AS hour FROM miner_index WHERE source = 2 ORDER BY 1 DESC LIMIT 8',
      );
    expect(hours).toHaveLength(8);
    const answers: BucketAnswer[] = [];
    for (const { hour } of hours) {
      const response = await app.http
        .get(`/api/v1/query_bucket/x?start_bucket=${hour}&end_bucket=${hour}`)
        .set('X-API-Key', TEST_MASTER_KEY)
        .expect(200);
      answers.push(response.body as BucketAnswer);
    }

    const uids = new Set(network.devnet.miners.map((miner) => miner.uid));
    const left = (await listMiners(app))
      .filter((miner) => uids.has(miner.uid))
      .map((miner) => miner.call_budget_left.GetDataEntityBucket);
    // 6 miners, half kept: 3 keep their call; the spot check took one, users the other two.
    expect(left.filter((calls) => calls! > 0)).toHaveLength(3);
    const fetched = answers.filter((answer) => answer.status === 'success' && !answer.cached);
    expect(fetched).toHaveLength(2);
    const kept = answers.filter((answer) => /kept for the index spot checks/.test(answer.message!));
    expect(kept.length).toBeGreaterThan(0);
    expect(kept[0].message).toMatch(
      /^Bucket \d+ is in the index \(its most credible holder, miner \d+, claims \d+ bytes under .+\), but its items cannot be fetched now: .+; ask again after \d{4}-/,
    );
  }, 60_000);
});

/**
 * Whatever the gateway counted, a miner's 403 says its limit for the hotkey is reached (a
 * validator on the same hotkey spent more than expected, a restart of ours): the gateway must
 * not call that synapse of that miner again until the miner's window has surely reset, on any
 * replica, and the listing must say so.
 */
describe('A miner that answers 403', () => {
  const REFUSING = 1;
  let network: TestNetwork;
  let apps: TestApp[];

  beforeAll(async () => {
    network = await startTestNetwork([{}, { behaviour: { blacklistAll: true } }, {}]);
    const first = await startTestApp(
      { ...network.env, VALIDATOR_SHARES_HOTKEY: 'false' },
      { ownDatabase: true },
    );
    // A second replica on the same database.
    const second = await startTestApp({
      ...network.env,
      VALIDATOR_SHARES_HOTKEY: 'false',
      DATABASE_URL: first.config.databaseUrl,
    });
    apps = [first, second];
  }, 60_000);

  afterAll(async () => {
    // The second replica first: the first one drops the database when it closes.
    for (const app of [...(apps ?? [])].reverse()) await app.close();
    await network.stop();
  });

  const advance = (ms: number) => {
    for (const app of apps) app.app.get(Clock).advance(ms);
    network.devnet.advanceClock(ms);
  };
  const listed = async (app: TestApp, uid: number) =>
    (await listMiners(app)).find((miner) => miner.uid === uid)!.call_budget_left;

  it('has that synapse not called again for an hour and the margin by any replica, and listed as 0 left', async () => {
    const first = await syncIndexNow(apps[0]);
    expect(first).toMatchObject({ synced: 2, skipped: 1, skippedReasons: { blacklisted: 1 } });
    expect(network.devnet.callCounts(REFUSING).GetMinerIndex).toEqual({ calls: 1, refused: 1 });
    for (const app of apps) {
      expect(await listed(app, REFUSING)).toEqual({
        GetMinerIndex: 0,
        GetDataEntityBucket: 2,
        GetContentsByBuckets: 10,
        OnDemandRequest: 10,
      });
      expect((await listed(app, 0)).GetMinerIndex).toBe(1);
    }

    // Both replicas sync again within the hour: the budget refuses before any call is sent.
    advance(30 * MINUTE);
    expect(await syncIndexNow(apps[0])).toMatchObject({
      synced: 2,
      skippedReasons: { no_budget: 1 },
    });
    expect(await syncIndexNow(apps[1])).toMatchObject({
      synced: 0,
      skippedReasons: { no_budget: 3 },
    });
    advance(34 * MINUTE);
    expect((await listed(apps[1], REFUSING)).GetMinerIndex).toBe(0);
    expect(network.devnet.callCounts(REFUSING).GetMinerIndex).toEqual({ calls: 1, refused: 1 });

    // An hour after the 403 the miner's window has surely reset; with the margin (5 minutes)
    // the budget is whole again: it is asked again.
    advance(MINUTE + 1_000);
    network.devnet.setBehaviour(REFUSING, {});
    expect((await listed(apps[1], REFUSING)).GetMinerIndex).toBe(2);
    expect(await syncIndexNow(apps[1])).toMatchObject({ synced: 3, skipped: 0 });
    expect(network.devnet.callCounts(REFUSING).GetMinerIndex).toEqual({ calls: 2, refused: 1 });
    expect((await listed(apps[0], REFUSING)).GetMinerIndex).toBe(1);
  }, 60_000);
});

interface OnDemandAnswer {
  status: string;
  data: unknown[];
  meta: { error?: string; miners_queried: number; origin: string; miners_without_budget: number };
}

/** The devnet and app of a describe, and its on-demand query. */
type BudgetedNetwork = { network: TestNetwork; app: TestApp; query: () => Promise<OnDemandAnswer> };

/**
 * Two devnet miners and an app asking them in `mode` with `settings`, its answers not cached,
 * started before the describe's tests and stopped after them; `indexed`: their indexes synced
 * first, so that a stored answer finds the label's holders.
 */
function budgetedNetwork(
  mode: 'live' | 'auto',
  settings: Record<string, string>,
  indexed = false,
): BudgetedNetwork {
  // Filled in before the tests run: read its fields in them, not before.
  const started = {
    /** `#bitcoin` on X, with the master key. */
    query: async () =>
      (
        await started.app.http
          .post('/api/v1/on_demand_data_request')
          .set('X-API-Key', TEST_MASTER_KEY)
          .send({ source: 'x', keywords: ['#bitcoin'] })
          .expect(200)
      ).body as OnDemandAnswer,
  } as BudgetedNetwork;
  beforeAll(async () => {
    started.network = await startTestNetwork(2);
    started.app = await startTestApp(
      {
        ...started.network.env,
        ON_DEMAND_MODE: mode,
        QUERY_CACHE_TTL_SECONDS: '0',
        ...settings,
      },
      { ownDatabase: true },
    );
    if (indexed) expect(await syncIndexNow(started.app)).toMatchObject({ synced: 2 });
  });
  afterAll(async () => {
    await started.app.close();
    await started.network.stop();
  });
  return started;
}

/**
 * Miners limit OnDemandRequest like the other synapses (common/protocol.py: 5 per window,
 * doubled, refused calls counted): live queries stay within the budget and ask only miners with
 * a call left; when none has one, `live` says so and `auto` answers from stored data.
 */
describe.each(['live', 'auto'] as const)(
  'The OnDemandRequest budget, ON_DEMAND_MODE=%s',
  (mode) => {
    const started = budgetedNetwork(mode, {
      QUERY_MINERS: '2',
      QUERY_QUORUM: '2',
      MINER_CALL_BUDGETS: 'OnDemandRequest=2/h',
    });

    /** What the devnet's miners have left of the budget, as the listing says. */
    const onDemandLeft = async () => {
      const uids = new Set(started.network.devnet.miners.map((miner) => miner.uid));
      return (await listMiners(started.app))
        .filter((miner) => uids.has(miner.uid))
        .map((miner) => miner.call_budget_left.OnDemandRequest);
    };

    it('keeps live queries within it and asks no miner beyond it', async () => {
      const { network, query } = started;
      expect(await onDemandLeft()).toEqual([2, 2]);
      for (let round = 0; round < 2; round++) {
        const answer = await query();
        expect(answer.status).toBe('success');
        expect(answer.meta.origin).toBe('live');
      }

      const spent = await query();
      for (const miner of network.devnet.miners)
        expect(network.devnet.requestCounts(miner.uid).OnDemandRequest).toBe(2);
      expect(await onDemandLeft()).toEqual([0, 0]);
      if (mode === 'live') {
        // Said, not answered: live mode has nothing else to ask.
        expect(spent.status).toBe('error');
        expect(spent.meta.error).toMatch(/spent this validator's OnDemandRequest budget/);
        expect(spent.meta.miners_queried).toBe(0);
      } else {
        // auto: the miners' stored data answers while their on-demand calls are spent.
        expect(spent.meta.origin).toBe('stored');
      }
    });
  },
);

/**
 * A round whose only miner with an OnDemandRequest call left fails while the other has spent its
 * calls: `live` says every queried miner failed and counts the one left out; `auto` answers from
 * stored data instead (docs/decisions.md, "A failed round with miners left out for budget goes to
 * stored data").
 */
describe.each(['live', 'auto'] as const)(
  'A failed round with a miner left out for budget, ON_DEMAND_MODE=%s',
  (mode) => {
    const started = budgetedNetwork(
      mode,
      { QUERY_MINERS: '1', QUERY_QUORUM: '1', MINER_CALL_BUDGETS: 'OnDemandRequest=1/h' },
      true,
    );

    it(mode === 'live' ? 'says so' : 'answers from stored data', async () => {
      const { network, query } = started;
      expect((await query()).meta.origin).toBe('live');
      const [first, other] = network.devnet.miners.map((miner) => miner.uid);
      const [spent, failing] =
        network.devnet.requestCounts(first).OnDemandRequest === 1 ? [first, other] : [other, first];
      expect(network.devnet.requestCounts(spent).OnDemandRequest).toBe(1);
      network.devnet.setBehaviour(failing, { http500: true });

      const answer = await query();
      expect(network.devnet.requestCounts(failing).OnDemandRequest).toBe(1);
      expect(network.devnet.requestCounts(spent).OnDemandRequest).toBe(1);
      expect(answer.meta.miners_without_budget).toBe(1);
      if (mode === 'live') {
        expect(answer).toMatchObject({
          status: 'error',
          meta: { origin: 'live', error: 'Every queried miner failed' },
        });
      } else {
        // The spent miner's stored data answers (its GetContentsByBuckets budget is its own).
        expect(answer).toMatchObject({ status: 'success', meta: { origin: 'stored' } });
        expect(answer.data.length).toBeGreaterThan(0);
      }
    });
  },
);

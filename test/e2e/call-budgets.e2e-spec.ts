import { DataSource } from 'typeorm';
import { Clock } from '../../src/common/clock/clock';
import { IndexSyncReport, IndexSyncService } from '../../src/network/index-sync.service';
import { NetworkService } from '../../src/network/network.service';
import { startTestNetwork, TestNetwork } from '../support/network';
import { startTestApp, TEST_MASTER_KEY, TestApp, testValidatorHotkey } from '../support/test-app';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const BUDGETED = ['GetMinerIndex', 'GetDataEntityBucket'];

interface BucketAnswer {
  status: 'success' | 'error';
  cached?: boolean;
  fetched_at?: string;
  message?: string;
}

/**
 * Miners allow a validator hotkey 2 GetMinerIndex and 2 GetDataEntityBucket calls an hour and
 * penalise more. Over a simulated hour and ten minutes (the gateway's and the devnet's clocks
 * moved together), index syncs with spot checks and query_bucket requests keep running; no
 * miner may ever receive more than its budget in any hour, and the devnet, which enforces the
 * subnet's limits, must never have to refuse the gateway.
 */
describe('Per-miner call budgets over a simulated hour', () => {
  let network: TestNetwork;
  let app: TestApp;
  const reports: { minute: number; report: IndexSyncReport }[] = [];
  const buckets: { minute: number; answer: BucketAnswer }[] = [];

  beforeAll(async () => {
    network = await startTestNetwork(3);
    app = await startTestApp({ ...network.env, INDEX_SPOT_CHECKS: '3' }, { ownDatabase: true });
    const database = app.app.get(DataSource);
    const sync = app.app.get(IndexSyncService);
    const queryBucket = async (path: string) =>
      (await app.http.get(path).set('X-API-Key', TEST_MASTER_KEY).expect(200)).body as BucketAnswer;
    for (let minute = 0; minute <= 70; minute += 10) {
      if (minute > 0) {
        app.app.get(Clock).advance(10 * MINUTE);
        network.devnet.advanceClock(10 * MINUTE);
      }
      // The job runs once per interval; the test runs it at every step of simulated time.
      await database.query(`DELETE FROM job_runs WHERE name = 'index-sync'`);
      reports.push({ minute, report: (await sync.runIfDue())! });
      for (const path of [
        'query_bucket/x?label=%23bitcoin',
        'query_bucket/reddit',
        'query_bucket/x',
      ])
        buckets.push({ minute, answer: await queryBucket(`/api/v1/${path}`) });
      await app.app.get(NetworkService).settled();
    }
  }, 120_000);

  afterAll(async () => {
    await app.close();
    await network.stop();
  });

  it('never gives a miner more than its budget in any hour, and is never refused', () => {
    const gateway = testValidatorHotkey();
    for (const miner of network.devnet.miners) {
      const calls = network.devnet.calls(miner.uid).filter((call) => call.caller === gateway);
      expect(calls.filter((call) => call.status !== 200)).toEqual([]);
      for (const synapse of BUDGETED) {
        const times = calls.filter((call) => call.synapse === synapse).map((call) => call.at);
        for (const start of times) {
          const inHour = times.filter((at) => at >= start && at < start + HOUR);
          expect(inHour.length).toBeLessThanOrEqual(2);
        }
      }
      // The budget was the limit: each miner got both of its index calls in the first hour.
      const firstHour = calls.filter(
        (call) => call.synapse === 'GetMinerIndex' && call.at < calls[0].at + HOUR,
      );
      expect(firstHour).toHaveLength(2);
    }
  });

  it('skips miners without budget in the sync, saying so, and syncs them again an hour later', () => {
    expect(reports[0].report).toMatchObject({ synced: 3, skipped: 0 });
    expect(reports[1].report).toMatchObject({ synced: 3, skipped: 0 });
    for (const { report } of reports.filter(({ minute }) => minute >= 20 && minute < 60))
      expect(report).toMatchObject({ synced: 0, skipped: 3, skippedReasons: { no_budget: 3 } });
    const later = reports.filter(({ minute }) => minute >= 60);
    expect(later.some(({ report }) => report.synced === 3)).toBe(true);
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

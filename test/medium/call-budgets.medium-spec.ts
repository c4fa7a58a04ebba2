import { randomUUID } from 'node:crypto';
import { Clock } from '../../src/common/clock/clock';
import { loadConfig } from '../../src/config/load-config';
import {
  CallBudgetRepository,
  NETWORK_RESERVE_LOCK_ID,
  Reservation,
} from '../../src/network/transport/call-budget.repository';
import { CallBudgets } from '../../src/network/transport/call-budgets';
import { MediumDatabase, openMediumDatabase } from '../support/medium-database';

const SECOND_MS = 1000;
const MINUTE_MS = 60 * SECOND_MS;
const HOUR_MS = 60 * MINUTE_MS;
/** The default MINER_CALL_BUDGET_MARGIN_SECONDS. */
const MARGIN_MS = 5 * MINUTE_MS;
/**
 * Postgres's clock runs on between the steps of a test (by milliseconds): an expectation at a
 * window's edge keeps this much on either side of it.
 */
const SLACK_MS = SECOND_MS;

/** A replica whose machine's clock is `skewMs` off: what its own time would date calls at. */
class SkewedClock extends Clock {
  constructor(private readonly skewMs: number) {
    super();
  }

  override now(): Date {
    return new Date(Date.now() + this.skewMs);
  }
}

describe(`${CallBudgets.name} on Postgres`, () => {
  let medium: MediumDatabase;
  let repository: CallBudgetRepository;

  beforeAll(async () => {
    // Its own database: the spot checks' share reads the miners table.
    medium = await openMediumDatabase({ own: 'call-budgets' });
    repository = new CallBudgetRepository(medium.dataSource);
  });
  afterAll(() => medium.close());

  // In tests, as behind a metagraph source: beside a validator unless told otherwise (in front
  // of `npm start`'s devnet, development's default, the hotkey is the gateway's own).
  function budgets(clock: Clock, env: Record<string, string> = {}): CallBudgets {
    return new CallBudgets(repository, clock, loadConfig({ NODE_ENV: 'test', ...env }));
  }

  it('never grants more than the budget to concurrent takers (replicas share the row)', async () => {
    const miner = `miner-${randomUUID()}`;
    const replicas = [budgets(new Clock()), budgets(new Clock())];

    const granted = await Promise.all(
      Array.from({ length: 24 }, (_, call) =>
        replicas[call % 2].take(miner, 'GetContentsByBuckets'),
      ),
    );

    expect(granted.filter((take) => take.granted)).toHaveLength(8);
  });

  it("leaves users' reserve to concurrent tasks' takers: half of a budget of 8 is 4 calls", async () => {
    const miner = `miner-${randomUUID()}`;
    const env = { MINER_CALL_BUDGETS: 'OnDemandRequest=8/h', TASK_BUDGET_RESERVE: '0.5' };
    const replicas = [budgets(new Clock(), env), budgets(new Clock(), env)];

    const granted = await Promise.all(
      Array.from({ length: 24 }, (_, call) =>
        replicas[call % 2].take(miner, 'OnDemandRequest', 'task'),
      ),
    );

    expect(granted.filter((take) => take.granted)).toHaveLength(4);
    // The reserve is users' to take.
    const user = await replicas[0].take(miner, 'OnDemandRequest', 'user');
    expect(user.granted).toBe(true);
  });

  // Before, each replica dated a call by its own clock: one running 70 minutes behind saw the
  // other's call of a minute ago outside the hour, and sent a second one into the same window.
  it("dates calls by Postgres's clock, so replicas whose clocks disagree still share one window", async () => {
    const miner = `miner-${randomUUID()}`;
    const [ahead, behind] = [
      budgets(new SkewedClock(0)),
      budgets(new SkewedClock(-70 * MINUTE_MS)),
    ];

    expect((await ahead.take(miner, 'GetMinerIndex')).granted).toBe(true);
    expect((await behind.take(miner, 'GetMinerIndex')).granted).toBe(false);
    expect((await behind.left([miner], 'GetMinerIndex')).get(miner)?.left).toBe(0);

    const other = `miner-${randomUUID()}`;
    expect((await behind.take(other, 'GetMinerIndex')).granted).toBe(true);
    expect((await ahead.take(other, 'GetMinerIndex')).granted).toBe(false);
    const [call] = (await repository.recentCalls([other], 'GetMinerIndex', 0, HOUR_MS)).get(other)!;
    expect(Math.abs(call.getTime() - Date.now())).toBeLessThan(10 * SECOND_MS);
  });

  it('counts the window the margin longer: a call a bare hour after the last is refused', async () => {
    const miner = `miner-${randomUUID()}`;
    const clock = new Clock();
    const [first, second] = [budgets(clock), budgets(clock)];
    expect((await first.take(miner, 'GetMinerIndex')).granted).toBe(true);

    clock.advance(HOUR_MS + SLACK_MS);
    expect((await second.take(miner, 'GetMinerIndex')).granted).toBe(false);
    clock.advance(MARGIN_MS - 2 * SLACK_MS);
    expect((await second.take(miner, 'GetMinerIndex')).granted).toBe(false);
    clock.advance(2 * SLACK_MS);
    expect((await second.take(miner, 'GetMinerIndex')).granted).toBe(true);
  });

  it('after a 403, leaves no call for an hour and the margin on every replica, then the whole budget', async () => {
    const miner = `miner-${randomUUID()}`;
    const clock = new Clock();
    const [first, second] = [budgets(clock), budgets(clock)];
    expect((await first.take(miner, 'GetContentsByBuckets')).granted).toBe(true);
    clock.advance(20 * MINUTE_MS);

    const before = Date.now() + clock.shiftMs();
    const until = (await first.spend(miner, 'GetContentsByBuckets'))!;

    expect(until.getTime() - before).toBeGreaterThanOrEqual(HOUR_MS + MARGIN_MS - SLACK_MS);
    expect(until.getTime() - before).toBeLessThanOrEqual(HOUR_MS + MARGIN_MS + SLACK_MS);
    expect((await second.left([miner], 'GetContentsByBuckets')).get(miner)).toEqual({
      left: 0,
      nextAt: until,
    });
    clock.advance(HOUR_MS + MARGIN_MS - 2 * SLACK_MS);
    expect((await second.take(miner, 'GetContentsByBuckets')).granted).toBe(false);
    clock.advance(3 * SLACK_MS);
    expect((await second.left([miner], 'GetContentsByBuckets')).get(miner)).toEqual({
      left: 8,
      nextAt: null,
    });
  });

  it("counts future-dated calls when the budget's window is shorter than the miner's hour", async () => {
    const miner = `miner-${randomUUID()}`;
    const clock = new Clock();
    const short = budgets(clock, { MINER_CALL_BUDGETS: 'GetContentsByBuckets=3/15m' });

    const until = (await short.spend(miner, 'GetContentsByBuckets'))!;

    clock.advance(55 * MINUTE_MS);
    expect((await short.take(miner, 'GetContentsByBuckets')).granted).toBe(false);
    expect((await short.left([miner], 'GetContentsByBuckets')).get(miner)).toEqual({
      left: 0,
      nextAt: until,
    });
    clock.advance(10 * MINUTE_MS + SLACK_MS);
    expect((await short.take(miner, 'GetContentsByBuckets')).granted).toBe(true);
  });

  // A millisecond later: a fill is dated after every call counted (the next test).
  it('never moves the end of a full window earlier', async () => {
    const miner = `miner-${randomUUID()}`;
    const now = (await repository.now(0)).getTime();
    const later = new Date(now + HOUR_MS);
    await repository.fill(miner, 'GetMinerIndex', later, 1);

    await repository.fill(miner, 'GetMinerIndex', new Date(now + 30 * MINUTE_MS), 2);

    const calls = await repository.recentCalls([miner], 'GetMinerIndex', 45 * MINUTE_MS, HOUR_MS);
    const end = new Date(later.getTime() + 1);
    expect(calls.get(miner)).toEqual([end, end]);
  });

  // A take and a 403's time read in the same millisecond: the fill had the take's stamp, and the
  // take's give-back removed one of the fill's calls.
  it("dates a fill after every call counted, so no give-back removes one of the fill's", async () => {
    const miner = `miner-${randomUUID()}`;
    const taken = await repository.reserve(miner, 'GetContentsByBuckets', 0, 8, HOUR_MS);

    await repository.fill(miner, 'GetContentsByBuckets', taken.at!, 8);
    await repository.giveBack(miner, 'GetContentsByBuckets', taken.at!);

    const calls = await repository.recentCalls([miner], 'GetContentsByBuckets', 0, HOUR_MS);
    expect(calls.get(miner)).toEqual(Array(8).fill(new Date(taken.at!.getTime() + 1)));
  });

  // A call the miner's circuit refused unsent, after its budget call was taken (MinerClient).
  it('gives back the one call taken, leaving the others and a later fill counted', async () => {
    const miner = `miner-${randomUUID()}`;
    const shared = budgets(new Clock());
    const first = await shared.take(miner, 'GetContentsByBuckets');
    const second = await shared.take(miner, 'GetContentsByBuckets');
    expect((await shared.left([miner], 'GetContentsByBuckets')).get(miner)?.left).toBe(6);

    await shared.giveBack(miner, 'GetContentsByBuckets', second.at!);

    const calls = await repository.recentCalls([miner], 'GetContentsByBuckets', 0, HOUR_MS);
    expect(calls.get(miner)).toEqual([first.at]);
    expect((await shared.left([miner], 'GetContentsByBuckets')).get(miner)?.left).toBe(7);
    // A 403 since the take filled the window: nothing of it is given back.
    await shared.spend(miner, 'GetContentsByBuckets');
    await shared.giveBack(miner, 'GetContentsByBuckets', first.at!);
    expect((await shared.left([miner], 'GetContentsByBuckets')).get(miner)?.left).toBe(0);
  });

  // A take landing between a 403's read of the time and its fill, then refused unsent (an open
  // circuit, our shutdown): the fill was dated by that take, and its give-back removed one of
  // the fill's calls, so the next take was granted while the miner's window was still full.
  it("keeps a 403's window full when a call taken while it was recorded is given back", async () => {
    const miner = `miner-${randomUUID()}`;
    const clock = new Clock();
    const other = budgets(clock);
    const racing = new CallBudgetRepository(medium.dataSource);
    let taken: Reservation | undefined;
    jest.spyOn(racing, 'now').mockImplementationOnce(async (shiftMs) => {
      const now = await repository.now(shiftMs);
      taken = await other.take(miner, 'GetContentsByBuckets');
      return now;
    });
    const spending = new CallBudgets(racing, clock, loadConfig({ NODE_ENV: 'test' }));

    await spending.spend(miner, 'GetContentsByBuckets');
    expect(taken?.granted).toBe(true);
    await other.giveBack(miner, 'GetContentsByBuckets', taken!.at!);

    expect((await other.left([miner], 'GetContentsByBuckets')).get(miner)?.left).toBe(0);
    expect((await other.take(miner, 'GetContentsByBuckets')).granted).toBe(false);
  });

  // Stamps are kept to the millisecond: two replicas' takes in one millisecond count the same
  // stamp twice, and a miner's synapses each have a row of their own.
  it("gives back one of equal stamps, and only of the call's own synapse", async () => {
    const miner = `miner-${randomUUID()}`;
    const at = new Date((await repository.now(0)).getTime());
    await repository.fill(miner, 'GetContentsByBuckets', at, 2);
    await repository.fill(miner, 'GetDataEntityBucket', at, 1);

    await repository.giveBack(miner, 'GetContentsByBuckets', at);

    const contents = await repository.recentCalls([miner], 'GetContentsByBuckets', 0, HOUR_MS);
    const entities = await repository.recentCalls([miner], 'GetDataEntityBucket', 0, HOUR_MS);
    expect(contents.get(miner)).toEqual([at]);
    expect(entities.get(miner)).toEqual([at]);
  });

  describe("the spot checks' share of the bucket calls (INDEX_SPOT_CHECK_RESERVE)", () => {
    let nextUid = 0;

    /** Registers miners, `indexed` of them with an index (the ones the spot checks can pick). */
    async function registerMiners(size: number, indexed = size): Promise<string[]> {
      const hotkeys = Array.from({ length: size }, () => `miner-${randomUUID()}`);
      await medium.dataSource.query(
        `INSERT INTO miners (uid, hotkey, coldkey, incentive, validator_permit, credibility,
                             state, updated_at, index_buckets)
         SELECT uid, hotkey, 'coldkey', 0, false, 0.5, 'active', now(), buckets
         FROM unnest($1::int[], $2::varchar[], $3::int[]) AS m(uid, hotkey, buckets)`,
        [
          hotkeys.map(() => nextUid++),
          hotkeys,
          hotkeys.map((_, index) => (index < indexed ? 12 : 0)),
        ],
      );
      return hotkeys;
    }

    /**
     * Miners allowing one GetDataEntityBucket an hour (beside a validator), half kept, on two
     * replicas; tasks have no users' reserve to leave, so they meet the spot checks' share.
     */
    async function network(size: number, indexed = size, clock = new Clock()) {
      const hotkeys = await registerMiners(size, indexed);
      const replica = () => {
        const shared = budgets(clock, {
          MINER_CALL_BUDGETS: 'GetDataEntityBucket=1/h',
          TASK_BUDGET_RESERVE: '0',
        });
        shared.setCheckedNetwork(() => hotkeys);
        return shared;
      };
      return { hotkeys, replicas: [replica(), replica()] };
    }

    // Every user-triggered GetDataEntityBucket (query_bucket, the stored on-demand path, a
    // task's collection) is taken here: before, only query_bucket checked the share, from a
    // snapshot read per request, so concurrent requests each took the same spare last calls.
    it("refuses users' and tasks' last calls beyond the share, also when taken at once by two replicas", async () => {
      const { hotkeys, replicas } = await network(10);

      const takes = await Promise.all(
        hotkeys
          .slice(0, 8)
          .map((hotkey, index) => replicas[index % 2].take(hotkey, 'GetDataEntityBucket', 'user')),
      );
      const tasks = await Promise.all(
        hotkeys
          .slice(8)
          .map((hotkey, index) => replicas[index % 2].take(hotkey, 'GetDataEntityBucket', 'task')),
      );

      // 10 miners, 5 keep their call: users took the other 5, tasks meet the share too.
      expect(takes.filter((take) => take.granted)).toHaveLength(5);
      expect(takes.filter((take) => take.kept)).toHaveLength(3);
      expect(tasks).toEqual([
        expect.objectContaining({ granted: false, kept: true }),
        expect.objectContaining({ granted: false, kept: true }),
      ]);
      const left = await replicas[0].left(hotkeys, 'GetDataEntityBucket');
      expect([...left.values()].filter((budget) => budget.left > 0)).toHaveLength(5);
    });

    // Before, every askable miner counted: those without an index (never synced, dead) are never
    // spot-checked, so they always had their call and filled the share alone.
    it('counts only the miners with an index, the ones the spot checks can pick', async () => {
      const { hotkeys, replicas } = await network(10, 6);
      const [shared] = replicas;

      const takes = [];
      for (const hotkey of hotkeys.slice(0, 6))
        takes.push(await shared.take(hotkey, 'GetDataEntityBucket'));

      // 6 miners with an index, 3 keep their call.
      expect(takes.map((take) => take.granted)).toEqual([true, true, true, false, false, false]);
      // A miner without an index is not one the checks could use: its call is taken freely.
      expect((await shared.take(hotkeys[9], 'GetDataEntityBucket')).granted).toBe(true);
    });

    it('keeps the last call of a miner with an index while the network is not known yet', async () => {
      const [hotkey] = await registerMiners(1);
      const unknown = budgets(new Clock(), { MINER_CALL_BUDGETS: 'GetDataEntityBucket=1/h' });

      expect(await unknown.take(hotkey, 'GetDataEntityBucket')).toMatchObject({
        granted: false,
        kept: true,
      });
      expect((await unknown.take(hotkey, 'GetDataEntityBucket', 'check')).granted).toBe(true);
    });

    // Before, a check took its call without the share's lock: between a user's count of the
    // network (the checked miner still holding its call) and that user's call, so both were
    // granted and one miner fewer than the share kept its call.
    it("has a spot check's take wait for a user's or task's take in progress", async () => {
      const { hotkeys, replicas } = await network(2);
      const other = medium.dataSource.createQueryRunner();
      await other.connect();
      try {
        await other.query('SELECT pg_advisory_lock($1)', [NETWORK_RESERVE_LOCK_ID]);
        let done = false;
        const check = replicas[0]
          .take(hotkeys[0], 'GetDataEntityBucket', 'check')
          .finally(() => (done = true));
        await new Promise((resolve) => setTimeout(resolve, 300));
        expect(done).toBe(false);
        await other.query('SELECT pg_advisory_unlock($1)', [NETWORK_RESERVE_LOCK_ID]);
        expect((await check).granted).toBe(true);
      } finally {
        await other.release();
      }
    });

    it('leaves the spot checks free to take the kept calls, and says when a call frees up', async () => {
      const { hotkeys, replicas } = await network(4);
      const [shared] = replicas;

      expect((await shared.take(hotkeys[0], 'GetDataEntityBucket')).granted).toBe(true);
      expect((await shared.take(hotkeys[1], 'GetDataEntityBucket')).granted).toBe(true);
      const kept = await shared.take(hotkeys[2], 'GetDataEntityBucket');
      expect(kept).toMatchObject({ granted: false, kept: true });
      const [first] = (
        await repository.recentCalls([hotkeys[0]], 'GetDataEntityBucket', 0, HOUR_MS + MARGIN_MS)
      ).get(hotkeys[0])!;
      expect(kept.freeAt).toEqual(new Date(first.getTime() + HOUR_MS + MARGIN_MS));

      expect((await shared.take(hotkeys[2], 'GetDataEntityBucket', 'check')).granted).toBe(true);
      expect((await shared.take(hotkeys[3], 'GetDataEntityBucket', 'check')).granted).toBe(true);
    });

    // The share counts the calls in the window only: those that filled it give the kept calls
    // back as they leave it, when `freeAt` said.
    it('gives a kept call back once the calls that filled the share have left the window', async () => {
      const clock = new Clock();
      const { hotkeys, replicas } = await network(4, 4, clock);
      const [shared] = replicas;
      expect((await shared.take(hotkeys[0], 'GetDataEntityBucket')).granted).toBe(true);
      expect((await shared.take(hotkeys[1], 'GetDataEntityBucket')).granted).toBe(true);
      expect((await shared.take(hotkeys[2], 'GetDataEntityBucket')).kept).toBe(true);

      clock.advance(HOUR_MS + MARGIN_MS - SLACK_MS);
      expect((await shared.take(hotkeys[2], 'GetDataEntityBucket')).kept).toBe(true);
      clock.advance(2 * SLACK_MS);
      expect((await shared.take(hotkeys[2], 'GetDataEntityBucket')).granted).toBe(true);
    });
  });
});

import { Clock } from '../../common/clock/clock';
import { SynapseName } from '../../common/synapse-names';
import { loadConfig } from '../../config/load-config';
import { CallBudgetRepository, NetworkReserve } from './call-budget.repository';
import { MINER_LIMIT_WINDOW_MS } from '../../config/miner-call-limits';
import { CallBudgets, CallPurpose } from './call-budgets';

const MINUTE_MS = 60_000;
const HOUR_MS = 60 * MINUTE_MS;
/** The default MINER_CALL_BUDGET_MARGIN_SECONDS: every window is counted this much longer. */
const MARGIN_MS = 5 * MINUTE_MS;
/** The database's clock, standing still between the steps of a test. */
const DATABASE_NOW = Date.parse('2026-01-10T12:00:00Z');

/**
 * The repository as Postgres behaves, in memory: the rolling window over the calls of each
 * (miner, synapse), dated by the database's clock moved by the process clock's shift. Its SQL
 * is checked against a real Postgres in the medium spec.
 */
class FakeRepository {
  readonly rows = new Map<string, Date[]>();
  /** The spot checks' share each take was given (the medium spec applies it in Postgres). */
  readonly reserves: (NetworkReserve | undefined)[] = [];
  /** Whether each take held the network's lock. */
  readonly locks: boolean[] = [];

  now(shiftMs: number) {
    return Promise.resolve(new Date(DATABASE_NOW + shiftMs));
  }

  reserve(
    hotkey: string,
    synapse: string,
    shiftMs: number,
    limit: number,
    windowMs: number,
    reserve?: NetworkReserve,
    lockNetwork = reserve !== undefined,
  ) {
    this.reserves.push(reserve);
    this.locks.push(lockNetwork);
    const at = new Date(DATABASE_NOW + shiftMs);
    const calls = this.inWindow(hotkey, synapse, at, windowMs);
    const granted = calls.length < limit;
    if (granted) calls.push(at);
    this.rows.set(`${hotkey}|${synapse}`, calls);
    return Promise.resolve({ granted, kept: false, freeAt: null });
  }

  fill(hotkey: string, synapse: string, at: Date, limit: number) {
    const latest = Math.max(
      at.getTime(),
      ...(this.rows.get(`${hotkey}|${synapse}`) ?? []).map(Number),
    );
    this.rows.set(
      `${hotkey}|${synapse}`,
      Array.from({ length: limit }, () => new Date(latest)),
    );
    return Promise.resolve();
  }

  recentCalls(hotkeys: readonly string[], synapse: string, shiftMs: number, windowMs: number) {
    const at = new Date(DATABASE_NOW + shiftMs);
    const found = new Map<string, Date[]>();
    for (const hotkey of hotkeys)
      if (this.rows.has(`${hotkey}|${synapse}`))
        found.set(
          hotkey,
          this.inWindow(hotkey, synapse, at, windowMs).sort((a, b) => a.getTime() - b.getTime()),
        );
    return Promise.resolve(found);
  }

  private inWindow(hotkey: string, synapse: string, at: Date, windowMs: number): Date[] {
    const calls = this.rows.get(`${hotkey}|${synapse}`) ?? [];
    return calls.filter((call) => call.getTime() > at.getTime() - windowMs);
  }
}

describe(CallBudgets.name, () => {
  let clock: Clock;
  let repository: FakeRepository;

  // In tests, as behind a metagraph source: beside a validator unless told otherwise (in front
  // of `npm start`'s devnet, development's default, the hotkey is the gateway's own).
  function budgets(env: Record<string, string> = {}): CallBudgets {
    return new CallBudgets(
      repository as unknown as CallBudgetRepository,
      clock,
      loadConfig({ NODE_ENV: 'test', ...env }),
    );
  }

  beforeEach(() => {
    // Time moves by `advance` only: the database's clock stands still, the shift grows.
    clock = new Clock();
    repository = new FakeRepository();
  });

  it('gives each miner its budget of calls per window and margin, then none until the oldest call leaves it', async () => {
    const shared = budgets({ VALIDATOR_SHARES_HOTKEY: 'false' });

    expect((await shared.take('miner', 'GetMinerIndex')).granted).toBe(true);
    clock.advance(10 * MINUTE_MS);
    expect((await shared.take('miner', 'GetMinerIndex')).granted).toBe(true);
    expect((await shared.take('miner', 'GetMinerIndex')).granted).toBe(false);
    expect((await shared.take('other', 'GetMinerIndex')).granted).toBe(true);

    const left = await shared.left(['miner', 'other', 'never'], 'GetMinerIndex');
    expect(left.get('miner')).toEqual({
      left: 0,
      nextAt: new Date(DATABASE_NOW + HOUR_MS + MARGIN_MS),
    });
    expect(left.get('other')?.left).toBe(1);
    expect(left.get('never')).toEqual({ left: 2, nextAt: null });

    clock.advance(50 * MINUTE_MS);
    expect((await shared.take('miner', 'GetMinerIndex')).granted).toBe(false);
    clock.advance(MARGIN_MS);
    expect((await shared.take('miner', 'GetMinerIndex')).granted).toBe(true);
    expect((await shared.take('miner', 'GetMinerIndex')).granted).toBe(false);
  });

  // A call counted an hour after the previous one may arrive at the miner a little earlier than
  // an hour after it (a slow connect delayed the previous one): one window of the miner's.
  it('refuses a call a bare hour after the last one, and grants it once the margin has passed', async () => {
    const beside = budgets();
    expect((await beside.take('miner', 'GetMinerIndex')).granted).toBe(true);

    clock.advance(HOUR_MS);
    expect((await beside.take('miner', 'GetMinerIndex')).granted).toBe(false);
    clock.advance(MARGIN_MS - 1);
    expect((await beside.take('miner', 'GetMinerIndex')).granted).toBe(false);
    clock.advance(1);
    expect((await beside.take('miner', 'GetMinerIndex')).granted).toBe(true);

    const bare = budgets({ MINER_CALL_BUDGET_MARGIN_SECONDS: '0' });
    expect((await bare.take('other', 'GetMinerIndex')).granted).toBe(true);
    clock.advance(HOUR_MS);
    expect((await bare.take('other', 'GetMinerIndex')).granted).toBe(true);
  });

  it('counts the default budgets beside a validator: 1 index, 1 bucket, 8 bulk and 8 on-demand calls', async () => {
    const beside = budgets();
    const taken = async (synapse: SynapseName) => {
      let count = 0;
      while (count < 20 && (await beside.take('miner', synapse)).granted) count++;
      return count;
    };

    expect(await taken('GetMinerIndex')).toBe(1);
    expect(await taken('GetDataEntityBucket')).toBe(1);
    expect(await taken('GetContentsByBuckets')).toBe(8);
    expect(await taken('OnDemandRequest')).toBe(8);
  });

  describe("users' reserve (TASK_BUDGET_RESERVE)", () => {
    it("lets tasks' calls take a miner's budget only down to the reserve, users' calls the rest", async () => {
      const shared = budgets();
      let tasks = 0;
      while (tasks < 20 && (await shared.take('miner', 'OnDemandRequest', 'task')).granted) tasks++;

      expect(tasks).toBe(4);
      expect((await shared.left(['miner'], 'OnDemandRequest')).get('miner')!.left).toBe(4);
      expect((await shared.left(['miner'], 'OnDemandRequest', 'task')).get('miner')!.left).toBe(0);
      for (let call = 0; call < 4; call++)
        expect((await shared.take('miner', 'OnDemandRequest')).granted).toBe(true);
      expect((await shared.take('miner', 'OnDemandRequest')).granted).toBe(false);
    });

    it('keeps a share rounded up, and nothing at 0', async () => {
      const taken = async (env: Record<string, string>) => {
        const shared = budgets(env);
        let count = 0;
        while (count < 20 && (await shared.take('miner', 'GetContentsByBuckets', 'task')).granted)
          count++;
        repository.rows.clear();
        return count;
      };

      expect(await taken({ TASK_BUDGET_RESERVE: '0.3' })).toBe(5);
      expect(await taken({ TASK_BUDGET_RESERVE: '0' })).toBe(8);
      expect(await taken({ TASK_BUDGET_RESERVE: '1' })).toBe(0);
    });
  });

  describe("the spot checks' share (INDEX_SPOT_CHECK_RESERVE)", () => {
    const bucket = (purpose: CallPurpose, env: Record<string, string> = {}, network?: string[]) => {
      const shared = budgets(env);
      if (network) shared.setCheckedNetwork(() => network);
      return shared.take('miner-a', 'GetDataEntityBucket', purpose);
    };
    const reserve = () => repository.reserves.at(-1);

    it("asks users' and tasks' GetDataEntityBucket calls to leave it, with the taker among the network", async () => {
      await bucket('user', {}, ['miner-b', 'miner-c']);
      expect(reserve()).toMatchObject({ askable: ['miner-b', 'miner-c', 'miner-a'], budget: 1 });
      await bucket('task', {}, ['miner-a', 'miner-b']);
      expect(reserve()?.askable).toEqual(['miner-a', 'miner-b']);
    });

    it("exempts the spot checks' own calls and other synapses", async () => {
      await bucket('check', {}, ['miner-b']);
      expect(reserve()).toBeUndefined();
      const shared = budgets();
      shared.setCheckedNetwork(() => ['miner-b']);
      await shared.take('miner-a', 'GetContentsByBuckets', 'user');
      expect(reserve()).toBeUndefined();
    });

    it("has the spot checks' own calls wait for the share's lock, other synapses not", async () => {
      await bucket('check', {}, ['miner-b']);
      await bucket('user', {}, ['miner-b']);
      await bucket('check', { INDEX_SPOT_CHECK_RESERVE: '0' }, ['miner-b']);
      await budgets().take('miner-a', 'GetContentsByBuckets', 'user');
      expect(repository.locks).toEqual([true, true, false, false]);
    });

    it('keeps no share at 0, or without spot checks', async () => {
      await bucket('user', { INDEX_SPOT_CHECK_RESERVE: '0' }, ['miner-b']);
      expect(reserve()).toBeUndefined();
      await bucket('user', { INDEX_SPOT_CHECKS: '0' }, ['miner-b']);
      expect(reserve()).toBeUndefined();
    });

    it('counts the taker alone while no network is set', async () => {
      await bucket('user');
      expect(reserve()?.askable).toEqual(['miner-a']);
      expect(reserve()?.keep(1)).toBe(1);
    });

    it.each([
      ['0.5', [0, 1, 1, 2, 3, 50]],
      ['0.25', [0, 1, 1, 1, 2, 25]],
      ['1', [0, 1, 2, 3, 6, 100]],
    ])('keeps a share of %s of the network rounded up', async (share, kept) => {
      await bucket('user', { INDEX_SPOT_CHECK_RESERVE: share }, ['miner-b']);
      expect([0, 1, 2, 3, 6, 100].map((size) => reserve()!.keep(size))).toEqual(kept);
    });
  });

  it('leaves a synapse without a budget free and unlimited', async () => {
    const beside = budgets({ MINER_CALL_BUDGETS: 'OnDemandRequest=none' });

    for (let call = 0; call < 50; call++)
      expect((await beside.take('miner', 'OnDemandRequest')).granted).toBe(true);
    expect((await beside.left(['miner'], 'OnDemandRequest')).get('miner')).toEqual({
      left: Infinity,
      nextAt: null,
    });
    expect(repository.rows.size).toBe(0);
    expect(await beside.spend('miner', 'OnDemandRequest')).toBeUndefined();
  });

  describe('spend (a 403 from the miner)', () => {
    it('leaves no call for a whole hour and the margin from the refusal, whatever was counted', async () => {
      const beside = budgets();

      const until = await beside.spend('miner', 'GetContentsByBuckets');

      expect(until).toEqual(new Date(DATABASE_NOW + HOUR_MS + MARGIN_MS));
      expect((await beside.left(['miner'], 'GetContentsByBuckets')).get('miner')).toEqual({
        left: 0,
        nextAt: until,
      });
      clock.advance(HOUR_MS + MARGIN_MS - 1);
      expect((await beside.take('miner', 'GetContentsByBuckets')).granted).toBe(false);
      clock.advance(1);
      expect((await beside.left(['miner'], 'GetContentsByBuckets')).get('miner')?.left).toBe(8);
      expect((await beside.take('miner', 'GetContentsByBuckets')).granted).toBe(true);
    });

    it("waits out the miner's hour even when the budget's window is shorter", async () => {
      const short = budgets({ MINER_CALL_BUDGETS: 'GetContentsByBuckets=4/15m' });
      const end = DATABASE_NOW + MINER_LIMIT_WINDOW_MS + MARGIN_MS;

      expect(await short.spend('miner', 'GetContentsByBuckets')).toEqual(new Date(end));

      clock.advance(45 * MINUTE_MS);
      expect((await short.take('miner', 'GetContentsByBuckets')).granted).toBe(false);
      expect((await short.left(['miner'], 'GetContentsByBuckets')).get('miner')).toEqual({
        left: 0,
        nextAt: new Date(end),
      });
      clock.advance(15 * MINUTE_MS + MARGIN_MS);
      expect((await short.take('miner', 'GetContentsByBuckets')).granted).toBe(true);
    });

    it("waits the budget's window when it is longer than an hour", async () => {
      const long = budgets({
        MINER_CALL_BUDGETS: 'GetMinerIndex=3/2h',
        INDEX_SYNC_INTERVAL: '2500',
      });

      expect(await long.spend('miner', 'GetMinerIndex')).toEqual(
        new Date(DATABASE_NOW + 2 * HOUR_MS + MARGIN_MS),
      );
      clock.advance(2 * HOUR_MS + MARGIN_MS - 1);
      expect((await long.take('miner', 'GetMinerIndex')).granted).toBe(false);
      clock.advance(1);
      expect((await long.take('miner', 'GetMinerIndex')).granted).toBe(true);
    });

    it('spends only the synapse refused, at that miner', async () => {
      const beside = budgets();

      await beside.spend('miner', 'GetDataEntityBucket');

      expect((await beside.take('miner', 'GetMinerIndex')).granted).toBe(true);
      expect((await beside.take('other', 'GetDataEntityBucket')).granted).toBe(true);
      expect((await beside.take('miner', 'GetDataEntityBucket')).granted).toBe(false);
    });
  });
});

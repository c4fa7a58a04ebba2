import { setTimeout as delay } from 'node:timers/promises';
import { Logger } from '@nestjs/common';
import { MinerReplacedError } from '../index/miner-index.repository';
import { linesLoggedBy } from '../../../test/support/logging-context';
import { until } from '../../../test/support/until';
import { Clock } from '../../common/clock/clock';
import { CountsForInterval, JobRunner } from '../../common/jobs/job-runner';
import { ShutdownNotice } from '../../common/lifecycle/shutdown-notice';
import { MetricsService } from '../../common/metrics/metrics.service';
import { IndexSpotChecks, SpotCheckResult, SyncedMiner } from './index-spot-checks';
import { IndexSyncReport, IndexSyncService } from './index-sync.service';
import { STALE_AFTER_SYNCS } from '../network-status';
import { IndexRow, InvalidIndexError } from '../index/compressed-index';
import { MinerIndexService } from '../index/miner-index.service';
import { MinerEntity, ServingMiner } from '../miner.entity';
import { NetworkService } from '../network.service';
import { MAX_DATA_AGE_DAYS, oldestUsefulBucket } from '../protocol';
import { WrongAnswerError } from '../sn13/messages';
import { BudgetLeft, CallBudgets } from '../transport/call-budgets';
import { BudgetUnreadableError, MinerCallError } from '../transport/miner-failures';
import { testConfig } from '../../../test/support/test-config';

/** Far from the machine's time, so that a read of `new Date()` instead of the clock shows. */
const NOW = Date.parse('2031-03-10T12:30:00Z');
const MINUTE_MS = 60_000;
const HOUR_MS = 60 * MINUTE_MS;

/** What a miner's GetMinerIndex budget says: `left` calls, the next one `inMs` from the call. */
interface Budget {
  left: number;
  inMs?: number;
}

interface SetUpOptions {
  miners?: number;
  /** Fetches of the miners' indexes at once; each worker takes the queue's next miner. */
  concurrency?: number;
  intervalMs?: number;
  /** The service's clock; by default one at NOW that follows real time. */
  clock?: Clock;
  /** Budgets by uid; a miner not named here is not in the answer (no budget is counted). */
  budgets?: Record<number, Budget>;
  /** What fetching a miner's index does; by default it answers rowsOf(uid). */
  fetch?: (miner: ServingMiner) => Promise<IndexRow[]>;
  /** Storing a miner's index; by default it succeeds. */
  replaceMinerIndex?: (uid: number) => Promise<void>;
  neverCalled?: number[];
  onStart?: boolean;
  whenReady?: () => Promise<void>;
}

/** A started clock at NOW running `rate` times as fast as real time. */
function clockFrom(rate = 1): Clock {
  return new Clock({ startMs: NOW, anchorMs: Date.now(), rate });
}

function minerOf(uid: number): ServingMiner {
  return {
    uid,
    hotkey: `hk${uid}`,
    coldkey: `ck${uid}`,
    axonUrl: `http://127.0.0.1:${9000 + uid}`,
    credibility: 0.9,
    incentive: 0.1,
    state: 'active',
  } as ServingMiner;
}

/** `uid` rows of X data: each miner's index tells it apart. */
function rowsOf(uid: number): IndexRow[] {
  return Array.from({ length: uid }, (_, hour) => ({
    source: 1,
    label: `#miner${uid}`,
    timeBucket: 500_000 + hour,
    bytes: 100,
  }));
}

/** Every service built, stopped after each test so that no schedule outlives it. */
const services: IndexSyncService[] = [];

/**
 * The service over fakes: miners 1..`miners` available for GetMinerIndex, a job runner that runs
 * whenever asked (no other replica), and fakes that record what the sync did. `fetched` lists
 * the index fetches in the order they started, with the service's time then.
 */
function setUp(options: SetUpOptions = {}) {
  const miners = Array.from({ length: options.miners ?? 3 }, (_, index) => minerOf(index + 1));
  const clock = options.clock ?? clockFrom();
  const shutdown = new ShutdownNotice();
  const fetched: { uid: number; at: number }[] = [];
  /** When each waiting miner's budget has a call again, as told to the service. */
  const nextAt = new Map<number, number>();
  const budgets = {
    // The database's clock: the service's.
    now: jest.fn(() => Promise.resolve(clock.now())),
    left: jest.fn((hotkeys: readonly string[]) => {
      const answer = new Map<string, BudgetLeft>();
      for (const miner of miners) {
        const budget = options.budgets?.[miner.uid];
        if (!hotkeys.includes(miner.hotkey) || !budget) continue;
        const at = budget.inMs === undefined ? null : clock.now().getTime() + budget.inMs;
        if (at !== null) nextAt.set(miner.uid, at);
        answer.set(miner.hotkey, { left: budget.left, nextAt: at === null ? null : new Date(at) });
      }
      return Promise.resolve(answer);
    }),
  };
  const fetch = options.fetch ?? ((miner: ServingMiner) => Promise.resolve(rowsOf(miner.uid)));
  /** The metagraph in use by uid: a test changes it as a metagraph applied during the run would. */
  const metagraph = new Map<number, MinerEntity>(miners.map((miner) => [miner.uid, miner]));
  const network = {
    availableMiners: jest.fn(() => miners),
    fetchMinerIndex: jest.fn((miner: ServingMiner, now: Date) => {
      fetched.push({ uid: miner.uid, at: now.getTime() });
      return fetch(miner);
    }),
    minersNeverCalled: jest.fn(() => options.neverCalled ?? []),
    // Every queued miner still holds its uid, at its axon, unless a test changes `metagraph`.
    registeredMiner: jest.fn((uid: number, hotkey: string) => {
      const miner = metagraph.get(uid);
      return miner?.hotkey === hotkey ? miner : undefined;
    }),
    deleteBucketFetchesBefore: jest.fn((_date: Date) => Promise.resolve(0)),
    whenReady: jest.fn(options.whenReady ?? (() => Promise.resolve())),
  };
  const index = {
    replaceMinerIndex: jest.fn(options.replaceMinerIndex ?? (() => Promise.resolve())),
    countMissedSyncs: jest.fn((_uids: readonly number[]) => Promise.resolve()),
    dropStaleIndexes: jest.fn((_missedSyncs: number) => Promise.resolve([] as number[])),
    dropHoursBefore: jest.fn((_hour: number) => Promise.resolve(0)),
    dropUnusedLabels: jest.fn(() => Promise.resolve(0)),
  };
  const spotResults: SpotCheckResult[] = [{ uid: 1, score: 1, problems: [] }];
  const spotChecks = {
    // The first row: what a check would fetch of each synced miner (the choice is its own spec's).
    pick: jest.fn((rows: readonly IndexRow[]) => rows[0]),
    check: jest.fn((_synced: SyncedMiner[]) => Promise.resolve(spotResults)),
  };
  const metrics = { observeIndexSync: jest.fn() };
  /** Whether each run counted for the interval, as the job told the runner. */
  const counted: boolean[] = [];
  const jobs = {
    announce: () => undefined,
    runOnce: async (
      _name: string,
      _intervalMs: number,
      run: () => Promise<unknown>,
      _interrupted: () => boolean,
      counts: CountsForInterval<unknown> = () => true,
    ) => {
      let result: unknown;
      try {
        result = await run();
      } catch (error) {
        counted.push(counts({ error: error as Error }));
        throw error;
      }
      counted.push(counts({ result }));
      return { ran: true, result };
    },
  };
  const config = testConfig({
    network: {
      validatorMinStake: 10_000,
      indexSync: {
        intervalMs: options.intervalMs ?? HOUR_MS,
        concurrency: options.concurrency ?? 1,
        onStart: options.onStart ?? false,
      },
    },
  });
  const service = new IndexSyncService(
    jobs as unknown as JobRunner,
    network as unknown as NetworkService,
    index as unknown as MinerIndexService,
    budgets as unknown as CallBudgets,
    spotChecks as unknown as IndexSpotChecks,
    clock,
    config,
    metrics as unknown as MetricsService,
    shutdown,
  );
  services.push(service);
  return {
    service,
    clock,
    fetched,
    nextAt,
    budgets,
    network,
    index,
    spotChecks,
    metrics,
    metagraph,
    counted,
    shutdown,
  };
}

async function syncOnce(service: IndexSyncService): Promise<IndexSyncReport> {
  const report = await service.runIfDue();
  if (!report) throw new Error('the index sync did not run');
  return report;
}

function rejecting(error: Error): Promise<never> {
  return Promise.reject(error);
}

/** When each miner's index was fetched, by uid (the service's time). */
function fetchTimes(fetched: { uid: number; at: number }[]): Map<number, number> {
  return new Map(fetched.map(({ uid, at }) => [uid, at]));
}

/**
 * Waits for what the service does on its own schedule: up to 5 s, a loaded machine's worst case
 * rather than the expected time.
 */
function waitFor(condition: () => boolean): Promise<true> {
  return until(() => Promise.resolve(condition() || undefined), 5000, 5);
}

/** A promise and what settles it, for a fetch the test finishes when it chooses. */
function deferred<T>() {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((done) => (resolve = done));
  return { promise, resolve };
}

describe(IndexSyncService.name, () => {
  let logs: jest.SpyInstance;
  let warnings: jest.SpyInstance;

  beforeEach(() => {
    logs = jest.spyOn(Logger.prototype, 'log').mockImplementation(() => undefined);
    warnings = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
  });

  afterEach(() => {
    for (const service of services.splice(0)) service.onModuleDestroy();
    jest.restoreAllMocks();
  });

  describe('order of the calls', () => {
    it('calls the miners with a call left first, in their order, then the others by when their call frees', async () => {
      const { service, fetched } = setUp({
        miners: 6,
        // 1 and 3 have none left for hours: not waited for, refused by their budget at once. 2
        // has calls left, though its next one to free frees later; 4 has no call counted.
        budgets: {
          1: { left: 0, inMs: 3 * HOUR_MS },
          2: { left: 2, inMs: 30 * MINUTE_MS },
          3: { left: 0, inMs: 2 * HOUR_MS },
          4: { left: 0 },
          6: { left: 1 },
        },
      });
      await syncOnce(service);
      expect(fetched.map(({ uid }) => uid)).toEqual([2, 4, 5, 6, 3, 1]);
    });

    it('calls every miner in its order when the budgets cannot be read (Postgres away)', async () => {
      const { service, fetched, budgets } = setUp({ miners: 3, budgets: { 1: { left: 0 } } });
      budgets.left.mockImplementation(() => rejecting(new Error('connection refused')));
      const report = await syncOnce(service);
      expect(fetched.map(({ uid }) => uid)).toEqual([1, 2, 3]);
      expect(report.synced).toBe(3);
    });

    it('takes the miners available for GetMinerIndex and asks their GetMinerIndex budgets', async () => {
      const { service, budgets, network } = setUp({ miners: 2 });
      await syncOnce(service);
      expect(network.availableMiners).toHaveBeenCalledWith('GetMinerIndex');
      expect(budgets.left).toHaveBeenCalledWith(['hk1', 'hk2'], 'GetMinerIndex');
    });
  });

  describe('waiting for a budget', () => {
    // A sixth of a 12 s interval: the sync waits at most 2 s for a call to free. (Of 600 ms, its
    // 100 ms were all a stalled machine had to call the other miner in.)
    it('waits for a call that frees within a sixth of the interval, and not for one further off', async () => {
      const { service, fetched, nextAt } = setUp({
        miners: 2,
        concurrency: 2,
        intervalMs: 12_000,
        budgets: { 1: { left: 0, inMs: 30 }, 2: { left: 0, inMs: 6000 } },
      });
      await syncOnce(service);
      const at = fetchTimes(fetched);
      expect(at.get(1)).toBeGreaterThanOrEqual(nextAt.get(1)!);
      // Called within the 2 s it could have waited: not waited for, neither in full nor in part.
      expect(at.get(2)).toBeLessThan(nextAt.get(2)! - 4000);
    });

    // An interval of two hours, whose sixth would be 20 minutes: the wait stops at 10. The clock
    // runs 300 times as fast, so that the wait of 9 minutes takes two polls (1 s each), and the
    // 10 minutes miner 2 must be called within are 2 s (at a thousand times, 0.6 s: a stall).
    it('waits at most 10 minutes, whatever the interval', async () => {
      const { service, fetched, nextAt } = setUp({
        miners: 2,
        concurrency: 2,
        intervalMs: 2 * HOUR_MS,
        clock: clockFrom(300),
        budgets: { 1: { left: 0, inMs: 9 * MINUTE_MS }, 2: { left: 0, inMs: 11 * MINUTE_MS } },
      });
      await syncOnce(service);
      const at = fetchTimes(fetched);
      expect(at.get(1)).toBeGreaterThanOrEqual(nextAt.get(1)!);
      expect(at.get(2)).toBeLessThan(nextAt.get(2)! - MINUTE_MS);
    });

    it('fetches with the time of the service clock', async () => {
      const { service, fetched } = setUp({ miners: 1 });
      await syncOnce(service);
      expect(fetched[0].at).toBeGreaterThanOrEqual(NOW);
      expect(fetched[0].at).toBeLessThan(NOW + MINUTE_MS);
    });
  });

  it('never has more fetches in flight than the configured concurrency, and uses all of it', async () => {
    let inFlight = 0;
    let most = 0;
    const { service } = setUp({
      miners: 7,
      concurrency: 3,
      fetch: async (miner) => {
        most = Math.max(most, ++inFlight);
        await delay(2);
        inFlight--;
        return rowsOf(miner.uid);
      },
    });
    const report = await syncOnce(service);
    expect(most).toBe(3);
    expect(report.synced).toBe(7);
  });

  describe('outcomes', () => {
    /** Miner 1 syncs; the others fail as their comment says. */
    const outcomes: Record<number, () => Promise<IndexRow[]>> = {
      1: () => Promise.resolve(rowsOf(1)),
      2: () => rejecting(new InvalidIndexError('more than 350,000 buckets')),
      3: () => rejecting(new WrongAnswerError('compressed_index_serialized is not a string')),
      4: () => rejecting(new MinerCallError('no_budget', 'no GetMinerIndex call left')),
      5: () => rejecting(new MinerCallError('blacklisted', 'HTTP 403')),
      6: () => rejecting(new MinerCallError('timeout', 'no answer within 120000 ms')),
      // Stored below by a Postgres that is away: our fault.
      7: () => Promise.resolve(rowsOf(7)),
      8: () => rejecting(new MinerCallError('no_budget', 'no GetMinerIndex call left')),
      9: () => rejecting(new Error('socket hang up in our own code')),
    };

    function syncOutcomes() {
      return setUp({
        miners: 9,
        fetch: (miner) => outcomes[miner.uid](),
        replaceMinerIndex: (uid) =>
          uid === 7 ? rejecting(new Error('connection terminated')) : Promise.resolve(),
        neverCalled: [20],
      });
    }

    it('counts each miner under what became of its index', async () => {
      const { service } = syncOutcomes();
      const report = await syncOnce(service);
      expect(report).toMatchObject({
        miners: 9,
        synced: 1,
        rejected: 2,
        skipped: 3,
        failed: 3,
        skippedReasons: { no_budget: 2, blacklisted: 1 },
        rows: 1,
      });
    });

    // Ours (Postgres, our own code) and calls not sent say nothing of the miner. A refusal it
    // sent (miner 5's 403) counts, in a run that reached another miner (OutdatedDrops): one
    // refusing every index call kept its claims in the statistics for good (a hostile-miner
    // audit's finding).
    it('counts a missed sync for a rejected index, a failed call, a refusal and no axon, not for a call not sent or our own error', async () => {
      const { service, index } = syncOutcomes();
      await syncOnce(service);
      expect(index.countMissedSyncs).toHaveBeenCalledTimes(1);
      expect([...index.countMissedSyncs.mock.calls[0][0]].sort((a, b) => a - b)).toEqual([
        2, 3, 5, 6, 20,
      ]);
    });

    it('adds up the rows of every synced miner', async () => {
      const { service } = setUp({ miners: 3 });
      const report = await syncOnce(service);
      expect(report.rows).toBe(1 + 2 + 3);
    });

    it('stores the index of a miner that answered one, for the miner it came from', async () => {
      const { service, index } = syncOutcomes();
      await syncOnce(service);
      expect(index.replaceMinerIndex).toHaveBeenCalledWith(1, rowsOf(1), {
        hotkey: 'hk1',
        validatorMinStake: 10_000,
      });
      expect(index.replaceMinerIndex).toHaveBeenCalledTimes(2);
    });

    // A metagraph applied during the run gave the uid to someone else: the index is not theirs.
    it('neither stores, spot-checks nor holds against the miner an index whose uid changed hands', async () => {
      const { service, index, spotChecks } = setUp({
        miners: 2,
        replaceMinerIndex: (uid) =>
          uid === 2 ? rejecting(new MinerReplacedError(2, 'hk2')) : Promise.resolve(),
      });
      const report = await syncOnce(service);
      expect(report).toMatchObject({ miners: 2, synced: 1, failed: 1, rejected: 0, skipped: 0 });
      expect(spotChecks.check).toHaveBeenCalledWith([
        { miner: minerOf(1), bucket: rowsOf(1)[0], claimed: 1 * 100 },
      ]);
      expect(index.countMissedSyncs.mock.calls.flatMap(([uids]) => [...uids])).not.toContain(2);
      expect(warnings).toHaveBeenCalledWith(
        { uid: 2, hotkey: 'hk2' },
        'miner 2: index not stored: uid 2 is no longer the miner hk2 (re-registered, deregistered or now a validator during the sync)',
      );
    });

    // A metagraph applied while the miner waited in the queue: the call would reach the old
    // owner, for an index the uid's new owner does not hold.
    it('calls no miner whose uid changed hands while it waited in the queue, and counts it skipped, not missed', async () => {
      const { service, fetched, network, index, spotChecks, metagraph } = setUp({
        miners: 3,
        fetch: (miner) => {
          // Miner 2 re-registered during the fetch of miner 1, after the queue was built.
          if (miner.uid === 1) metagraph.set(2, { ...minerOf(2), hotkey: 'hk2-new' });
          return Promise.resolve(rowsOf(miner.uid));
        },
      });
      const report = await syncOnce(service);
      expect(fetched.map(({ uid }) => uid)).toEqual([1, 3]);
      expect(network.registeredMiner).toHaveBeenCalledWith(2, 'hk2');
      expect(report).toMatchObject({
        miners: 3,
        synced: 2,
        failed: 0,
        skipped: 1,
        skippedReasons: { replaced: 1 },
      });
      expect(index.replaceMinerIndex.mock.calls.map(([uid]) => uid)).toEqual([1, 3]);
      expect(index.countMissedSyncs.mock.calls.flatMap(([uids]) => [...uids])).not.toContain(2);
      expect(spotChecks.check).toHaveBeenCalledWith([
        { miner: minerOf(1), bucket: rowsOf(1)[0], claimed: 1 * 100 },
        { miner: minerOf(3), bucket: rowsOf(3)[0], claimed: 3 * 100 },
      ]);
      expect(warnings).toHaveBeenCalledWith(
        { uid: 2, hotkey: 'hk2' },
        'miner 2: index not fetched: uid 2 is no longer the miner hk2 (re-registered, deregistered or now a validator during the sync)',
      );
    });

    // The queued record keeps the axon it had when the queue was built: called there, the call
    // reached whoever holds that address now (or nobody), and its failure was the miner's.
    it('calls a miner that moved its axon while it waited in the queue at its new address', async () => {
      const called: { uid: number; axonUrl: string }[] = [];
      const moved = 'http://127.0.0.1:9102';
      const { service, metagraph } = setUp({
        miners: 2,
        fetch: (miner) => {
          called.push({ uid: miner.uid, axonUrl: miner.axonUrl });
          // Miner 2 moved during the fetch of miner 1, after the queue was built.
          if (miner.uid === 1) metagraph.set(2, { ...minerOf(2), axonUrl: moved });
          return Promise.resolve(rowsOf(miner.uid));
        },
      });

      const report = await syncOnce(service);

      expect(called).toEqual([
        { uid: 1, axonUrl: minerOf(1).axonUrl },
        { uid: 2, axonUrl: moved },
      ]);
      expect(report).toMatchObject({ synced: 2, skipped: 0 });
    });

    it('calls no miner that took its axon down while it waited in the queue, and counts it skipped', async () => {
      const { service, fetched, metagraph } = setUp({
        miners: 2,
        fetch: (miner) => {
          if (miner.uid === 1) metagraph.set(2, { ...minerOf(2), axonUrl: null });
          return Promise.resolve(rowsOf(miner.uid));
        },
      });

      const report = await syncOnce(service);

      expect(fetched.map(({ uid }) => uid)).toEqual([1]);
      expect(report).toMatchObject({ synced: 1, skipped: 1, skippedReasons: { no_axon: 1 } });
      expect(warnings).toHaveBeenCalledWith(
        { uid: 2, hotkey: 'hk2' },
        'miner 2: index not fetched: it serves no axon now',
      );
    });

    it('hands the spot checks exactly the synced miners, each with the one bucket picked of its index, and reports their verdicts', async () => {
      const { service, spotChecks } = syncOutcomes();
      const report = await syncOnce(service);
      expect(spotChecks.check).toHaveBeenCalledWith([
        { miner: minerOf(1), bucket: rowsOf(1)[0], claimed: 1 * 100 },
      ]);
      expect(report.spotChecks).toEqual([{ uid: 1, score: 1, problems: [] }]);
    });

    it('gives the metrics the report', async () => {
      const { service, metrics } = syncOutcomes();
      const report = await syncOnce(service);
      expect(metrics.observeIndexSync).toHaveBeenCalledTimes(1);
      const observed = metrics.observeIndexSync.mock.calls[0][0] as IndexSyncReport;
      // Its seconds unrounded: pinned in 'a long run'.
      expect(observed).toEqual({ ...report, seconds: expect.any(Number) as number });
    });

    it('logs how the run ended, with the reasons for the skips', async () => {
      const { service } = syncOutcomes();
      await syncOnce(service);
      expect(logs).toHaveBeenLastCalledWith(
        expect.stringMatching(
          /^index sync finished in [\d.]+ s: 9\/9 miners, 1 rows loaded, \d+ rows\/s, 2 rejected, 3 failed, 3 skipped \(no_budget: 2, blacklisted: 1\); 1 spot checks \(0 with problems\), 0 stale indexes dropped, 0 rows of expired hours dropped$/,
        ),
      );
    });

    it('ends with what its spot checks found and what it dropped', async () => {
      const { service, index, network, spotChecks } = setUp({ miners: 3 });
      spotChecks.check.mockResolvedValue([
        { uid: 1, score: 1, problems: [] },
        { uid: 2, score: 0, problems: ['bucket 500000 missing'] },
      ]);
      index.dropStaleIndexes.mockResolvedValue([7]);
      index.dropHoursBefore.mockResolvedValue(42);
      index.dropUnusedLabels.mockResolvedValue(5);
      network.deleteBucketFetchesBefore.mockResolvedValue(2);
      const report = await syncOnce(service);
      expect(logs).toHaveBeenLastCalledWith(
        `index sync finished in ${report.seconds} s: 3/3 miners, 6 rows loaded, ` +
          `${Math.round(6 / Math.max(report.seconds, 0.001))} rows/s; ` +
          '2 spot checks (1 with problems), 1 stale indexes dropped, 42 rows of expired hours dropped, ' +
          '5 labels no index names deleted, 2 days of stored items past the retention dropped',
      );
    });
  });

  // Three runs in which our own network failed would otherwise drop every index.
  describe('a run that reached no miner', () => {
    const timeout = () => rejecting(new MinerCallError('timeout', 'no answer'));

    it.each([
      ['one miner synced', () => Promise.resolve(rowsOf(1)), [2, 9]],
      ['one index rejected', () => rejecting(new InvalidIndexError('bad')), [1, 2, 9]],
      ['no miner reached', timeout, [9]],
    ])(
      'counts the failed calls as missed only when it reached one (%s), and no axon always',
      async (_case, first, missed) => {
        const { service, index } = setUp({
          miners: 2,
          fetch: (miner) => (miner.uid === 1 ? first() : timeout()),
          neverCalled: [9],
        });
        await syncOnce(service);
        expect(index.countMissedSyncs).toHaveBeenCalledWith(missed);
      },
    );
  });

  // A run that called no miner spent no call budget: waiting an interval behind it left the
  // index unloaded for 65 minutes after the miners became reachable (a metagraph read later).
  describe('a run that could call no miner', () => {
    const refused = (reason: 'no_budget' | 'address_refused' | 'busy' | 'circuit_open') => () =>
      rejecting(new MinerCallError(reason, 'not called'));

    it.each([
      ['no miner available', 0, undefined],
      ['every call refused before it was made', 2, refused('address_refused')],
      ['no budget left', 2, refused('no_budget')],
    ])(
      'does not count for the interval (%s), nor counts a sync missed by any miner',
      async (_case, miners, fetch) => {
        const { service, index, counted } = setUp({ miners, fetch, neverCalled: [9] });
        await syncOnce(service);
        expect(counted).toEqual([false]);
        expect(index.countMissedSyncs).not.toHaveBeenCalled();
      },
    );

    it.each([
      ['one miner synced', () => Promise.resolve(rowsOf(1))],
      ['a miner blacklisted us', () => rejecting(new MinerCallError('blacklisted', 'HTTP 403'))],
      ['a call timed out', () => rejecting(new MinerCallError('timeout', 'no answer'))],
    ])('counts for the interval once it called a miner (%s)', async (_case, fetch) => {
      const { service, counted } = setUp({ miners: 1, fetch });
      await syncOnce(service);
      expect(counted).toEqual([true]);
    });
  });

  // A run that called no miner is retried within seconds: its spot checks took 5 miners' only
  // bucket call of the hour at each retry, about 50 before the index calls freed up (a scale
  // audit's finding).
  it('spot-checks once an interval while its runs call no miner', async () => {
    const { service, spotChecks, counted } = setUp({ miners: 0 });
    await service.runIfDue();
    await service.runIfDue();
    await service.runIfDue();
    expect(counted).toEqual([false, false, false]);
    expect(spotChecks.check).toHaveBeenCalledTimes(1);
  });

  // Postgres away at the run's end (its drops): a run that had called no miner is still no sync,
  // and retried within seconds; one that called miners may have spent their budgets.
  describe('a run that failed', () => {
    const postgresAway = () => rejecting(new Error('connect ECONNREFUSED 127.0.0.1:5432'));

    it('does not count for the interval when it had called no miner', async () => {
      const { service, index, counted } = setUp({ miners: 0 });
      index.dropHoursBefore.mockImplementation(postgresAway);
      await expect(service.runIfDue()).rejects.toThrow('ECONNREFUSED');
      expect(counted).toEqual([false]);
    });

    it('counts for the interval once it had called a miner', async () => {
      const { service, index, counted } = setUp({ miners: 1 });
      index.dropHoursBefore.mockImplementation(postgresAway);
      await expect(service.runIfDue()).rejects.toThrow('ECONNREFUSED');
      expect(counted).toEqual([true]);
    });
  });

  describe('dropping what is outdated', () => {
    it('counts the missed syncs before it drops the indexes missed STALE_AFTER_SYNCS times, and reports and logs those', async () => {
      const { service, index } = setUp({ miners: 1 });
      index.dropStaleIndexes.mockResolvedValue([4, 5]);
      const report = await syncOnce(service);
      // As documented: two misses keep an index, the third drops it.
      expect(index.dropStaleIndexes).toHaveBeenCalledWith(3);
      expect(STALE_AFTER_SYNCS).toBe(3);
      expect(index.countMissedSyncs.mock.invocationCallOrder[0]).toBeLessThan(
        index.dropStaleIndexes.mock.invocationCallOrder[0],
      );
      expect(report.staleDropped).toEqual([4, 5]);
      expect(warnings).toHaveBeenCalledWith(
        expect.stringContaining('indexes of uids 4, 5 dropped'),
      );
    });

    it('warns of no dropped index when none was dropped', async () => {
      const { service } = setUp({ miners: 1 });
      await syncOnce(service);
      expect(warnings).not.toHaveBeenCalled();
    });

    it('drops the hours older than MAX_DATA_AGE_DAYS and the bucket fetches older than as many days, on its clock', async () => {
      const { service, index, network, clock } = setUp({ miners: 1 });
      index.dropHoursBefore.mockResolvedValue(17);
      const before = clock.now().getTime();
      const report = await syncOnce(service);
      const after = clock.now().getTime();
      expect(index.dropHoursBefore).toHaveBeenCalledWith(oldestUsefulBucket(new Date(NOW)));
      expect(report.oldRowsDropped).toBe(17);
      const retention = MAX_DATA_AGE_DAYS * 24 * HOUR_MS;
      const cutoff = network.deleteBucketFetchesBefore.mock.calls[0][0].getTime();
      expect(cutoff).toBeGreaterThanOrEqual(before - retention);
      expect(cutoff).toBeLessThanOrEqual(after - retention);
    });
  });

  // A sync of every miner can take minutes: the operator follows it in the logs.
  describe('a long run', () => {
    // Only `performance` is faked: the run's length is read from it, and each fetch moves it on.
    beforeEach(() =>
      jest.useFakeTimers({
        doNotFake: [
          'Date',
          'hrtime',
          'nextTick',
          'queueMicrotask',
          'setImmediate',
          'clearImmediate',
          'setInterval',
          'clearInterval',
          'setTimeout',
          'clearTimeout',
        ],
      }),
    );
    afterEach(() => jest.useRealTimers());

    /** Four miners whose fetches take 3 s each. */
    function slowSync() {
      return setUp({
        miners: 4,
        fetch: (miner) => {
          jest.advanceTimersByTime(3000);
          return Promise.resolve(rowsOf(miner.uid));
        },
      });
    }

    it('logs its progress once 5 seconds have passed since the last line, and once the queue is done', async () => {
      const { service } = slowSync();
      await syncOnce(service);
      const progress = logs.mock.calls
        .map(([message]) => String(message))
        .filter((message) => message.startsWith('index sync'))
        .map((message) => /^index sync[^:]*: \d+\/\d+ miners/.exec(message)?.[0]);
      expect(progress).toEqual([
        'index sync: 2/4 miners',
        'index sync: 4/4 miners',
        'index sync finished in 12 s: 4/4 miners',
      ]);
    });

    it('logs the end of the queue once, however many workers there are', async () => {
      const { service } = setUp({ miners: 4, concurrency: 4 });
      await syncOnce(service);
      const progress = logs.mock.calls
        .map(([message]) => String(message))
        .filter((message) => message.startsWith('index sync'));
      // The queue's end, then the run's, with the spot checks and drops between them.
      expect(progress).toHaveLength(2);
      expect(progress[0]).toMatch(/^index sync: 4\/4 miners/);
      expect(progress[1]).toMatch(/^index sync finished in [\d.]+ s: 4\/4 miners/);
    });

    it('reports its length in seconds, to the metrics too', async () => {
      const { service, metrics } = slowSync();
      const report = await syncOnce(service);
      expect(report.seconds).toBe(12);
      expect(metrics.observeIndexSync).toHaveBeenCalledWith(
        expect.objectContaining({ seconds: 12 }),
      );
    });
  });

  describe('stopping', () => {
    it('calls no further miner once stopped, and neither spot-checks nor drops anything', async () => {
      const { service, fetched, spotChecks, index, network, metrics } = setUp({
        miners: 3,
        fetch: (miner) => {
          service.onModuleDestroy();
          return Promise.resolve(rowsOf(miner.uid));
        },
      });
      const report = await syncOnce(service);
      expect(fetched.map(({ uid }) => uid)).toEqual([1]);
      expect(report.synced).toBe(1);
      expect(spotChecks.check).not.toHaveBeenCalled();
      expect(index.countMissedSyncs).not.toHaveBeenCalled();
      expect(index.dropStaleIndexes).not.toHaveBeenCalled();
      expect(index.dropHoursBefore).not.toHaveBeenCalled();
      expect(network.deleteBucketFetchesBefore).not.toHaveBeenCalled();
      expect(metrics.observeIndexSync).toHaveBeenCalledTimes(1);
      expect(logs).toHaveBeenLastCalledWith(
        expect.stringMatching(
          /^index sync cut short by shutdown after [\d.]+ s: 1\/3 miners, 1 rows loaded/,
        ),
      );
    });

    // The app's close, which stops the job, comes after the drain of users' requests: the sync
    // went on through it, miner after miner (a flake of the Ctrl-C e2e found it finishing).
    it('calls no further miner once the shutdown began, before the app closes', async () => {
      const { service, fetched, shutdown } = setUp({
        miners: 3,
        fetch: (miner) => {
          shutdown.begin();
          return Promise.resolve(rowsOf(miner.uid));
        },
      });
      const report = await syncOnce(service);
      expect(fetched.map(({ uid }) => uid)).toEqual([1]);
      expect(report.synced).toBe(1);
      expect(logs).toHaveBeenLastCalledWith(
        expect.stringMatching(/^index sync cut short by shutdown after [\d.]+ s: 1\/3 miners/),
      );
    });

    it('does not drop anything when stopped during the spot checks (their calls were aborted)', async () => {
      const { service, spotChecks, index } = setUp({ miners: 1 });
      spotChecks.check.mockImplementation(() => {
        service.onModuleDestroy();
        return Promise.resolve([]);
      });
      await syncOnce(service);
      expect(index.countMissedSyncs).not.toHaveBeenCalled();
      expect(index.dropHoursBefore).not.toHaveBeenCalled();
    });

    // The wait polls every second: shutdown must not sit out the rest of a wait of minutes.
    it('ends a wait for a budget within a poll of being stopped, without calling the miner', async () => {
      const { service, fetched } = setUp({ miners: 1, budgets: { 1: { left: 0, inMs: 10_000 } } });
      const started = Date.now();
      const report = service.runIfDue();
      await delay(50);
      service.onModuleDestroy();
      await report;
      // Within a poll (1 s), with seconds to spare for a loaded machine; not the 10 s wait.
      expect(Date.now() - started).toBeLessThan(5000);
      expect(fetched).toEqual([]);
    });

    it('lets shutdown wait for the run in progress', async () => {
      const answer = deferred<IndexRow[]>();
      const { service, network } = setUp({ miners: 1, fetch: () => answer.promise });
      const run = service.runIfDue();
      await waitFor(() => network.fetchMinerIndex.mock.calls.length > 0);
      service.onModuleDestroy();
      let settled = false;
      const shutdown = service.beforeApplicationShutdown().then(() => (settled = true));
      await delay(20);
      expect(settled).toBe(false);
      answer.resolve(rowsOf(1));
      await shutdown;
      expect((await run)?.synced).toBe(1);
    });
  });

  describe('schedule', () => {
    it('runs a first sync at start once the network is ready, when INDEX_SYNC_ON_START says so', async () => {
      const ready = deferred<void>();
      const { service, metrics } = setUp({ onStart: true, whenReady: () => ready.promise });
      service.onApplicationBootstrap();
      await delay(20);
      expect(metrics.observeIndexSync).not.toHaveBeenCalled();
      ready.resolve();
      await waitFor(() => metrics.observeIndexSync.mock.calls.length > 0);
    });

    it('runs no sync at start otherwise', async () => {
      const { service, network, metrics } = setUp({ onStart: false });
      service.onApplicationBootstrap();
      await delay(20);
      expect(network.whenReady).not.toHaveBeenCalled();
      expect(metrics.observeIndexSync).not.toHaveBeenCalled();
    });

    it('runs every interval until stopped', async () => {
      const { service, metrics } = setUp({ intervalMs: 20 });
      service.onApplicationBootstrap();
      await waitFor(() => metrics.observeIndexSync.mock.calls.length >= 2);
      service.onModuleDestroy();
      await service.beforeApplicationShutdown();
      const runs = metrics.observeIndexSync.mock.calls.length;
      await delay(80);
      expect(metrics.observeIndexSync).toHaveBeenCalledTimes(runs);
    });
  });

  // An operator's audit: LOG_LEVEL=debug added nothing below info. A round's line, and one per
  // miner synced or skipped by no fault of its own; counts and a short hotkey, never the index.
  describe('debug lines', () => {
    /** Miner 1 syncs; miner 2 is skipped, its budget spent. */
    const syncAt = (level: string) =>
      linesLoggedBy(IndexSyncService.name, level, async () => {
        const { service } = setUp({
          miners: 2,
          fetch: (miner) =>
            miner.uid === 1
              ? Promise.resolve(rowsOf(1))
              : rejecting(new MinerCallError('no_budget', 'no GetMinerIndex call left')),
        });
        await syncOnce(service);
      });

    it('says the round, each miner synced with its rows and each skipped with why, at debug', async () => {
      const lines = (await syncAt('debug')).filter((line) => line.level === 20);
      expect(lines).toEqual([
        expect.objectContaining({
          miners: 2,
          waiting_for_budget: 0,
          msg: 'index sync round: 2 miners queued, 0 of them waiting for budget',
        }),
        expect.objectContaining({
          uid: 1,
          hotkey: 'hk1',
          rows: 1,
          msg: 'miner 1: index of 1 rows stored',
        }),
        expect.objectContaining({
          uid: 2,
          hotkey: 'hk2',
          skipped: 'no_budget',
          msg: 'miner 2: index not fetched (no_budget): no GetMinerIndex call left',
        }),
      ]);
      // Never the index itself.
      expect(JSON.stringify(lines)).not.toContain('#miner1');
    });

    it('writes none at info', async () => {
      expect((await syncAt('info')).filter((line) => line.level < 30)).toEqual([]);
    });
  });

  // A hosted-Postgres audit: a budget that could not be read (the role's connection limit
  // reached) was said at debug only, behind the end line's `no_budget`.
  it('warns once a run of a budget that could not be read, naming the cause', async () => {
    const { service } = setUp({
      miners: 3,
      fetch: () =>
        rejecting(new BudgetUnreadableError('GetMinerIndex', 'too many connections for role')),
    });
    await syncOnce(service);
    expect(warnings.mock.calls).toEqual([
      [
        expect.objectContaining({ uid: expect.any(Number) }),
        expect.stringMatching(
          /^miner \d: index not fetched: GetMinerIndex not sent: the call budget could not be read \(too many connections for role\); the run's other miners skipped for it are counted as no_budget in its end line$/,
        ),
      ],
    ]);
  });
});

import { Logger } from '@nestjs/common';
import { Clock } from '../common/clock/clock';
import { MetricsService } from '../common/metrics/metrics.service';
import { SynapseName } from '../common/synapse-names';
import { OnDemandMode } from '../config/app-config';
import { generateCorpus } from '../devnet/corpus';
import { toWireEntity } from '../devnet/miner-records';
import { BucketHolder, BucketReader, HOLDERS_CONSIDERED } from './buckets/bucket-reader';
import { CredibilityRecorder } from './credibility-recorder';
import { IndexFreshness } from './network-status';
import { MinerIndexService } from './index/miner-index.service';
import { MetagraphService } from './metagraph/metagraph.service';
import { MinerState, ServingMiner } from './miner.entity';
import { MinersRepository } from './miners.repository';
import { LiveQueryService, SERVED_MEMORY_MS } from './live-query.service';
import { ErasedAuthorsRepository } from './erased-authors.repository';
import { NetworkService } from './network.service';
import { indexNotLoaded, partialAndEmpty } from './stored/empty-answers';
import { authorOfItem, DataItem, NetworkQuery, XItem } from './protocol';
import { StoredAnswer } from './stored/stored-answer';
import { StoredDataService } from './stored/stored-data.service';
import { BudgetLeft, CallBudgets } from './transport/call-budgets';
import { CircuitListener } from './transport/miner-circuits';
import { MinerClient } from './transport/miner-client';
import { MinerReply, MinerTarget, replyOf } from './transport/miner-reply';
import { LiedBuckets } from './stored/lied-buckets';
import { MemoryItemStore } from '../../test/support/memory-item-store';
import { BudgetUnreadableError, MinerCallError } from './transport/miner-failures';
import { MinerFailureReason } from './query-failures';
import { testConfig } from '../../test/support/test-config';

/** Where the test budgets' spent calls start to leave their window (miner n's n minutes later). */
const SPENT_UNTIL = '2026-01-15T12:20:00Z';

const STORED: StoredAnswer = {
  items: [],
  coverage: 'complete',
  namesLabels: true,
  indexLoaded: true,
  buckets: { planned: 3, fromStore: 1, fetchedNow: 2, missing: 0 },
  oldestFetchedAt: new Date('2026-01-15T10:00:00Z'),
  miners: {
    queried: 2,
    responded: 2,
    failed: { count: 0, reasons: {} },
    empty: 1,
    passedChecks: 1,
  },
  itemsDroppedInvalid: 4,
  consensus: 0.5,
  deadlineReached: false,
};

const QUERY: NetworkQuery = {
  source: 'x',
  usernames: [],
  keywords: ['#tao'],
  keywordMode: 'all',
  startDate: null,
  endDate: new Date(),
  limit: 10,
};

/** A post any query without keywords or usernames matches. */
const [X_POST] = generateCorpus({
  seed: 13,
  now: new Date('2024-06-01T00:00:00Z'),
  size: { x: 1, reddit: 0 },
}).items;

const INDEX_SYNC = { intervalMs: 3_900_000, onStart: true, fetchTimeoutMs: 120_000 };

/**
 * Miners 1..count; `serving` of them answer OnDemandRequest (with nothing), the rest 404, but
 * for those `faults` names, which fail so (unreachable, silent) for every synapse. The
 * OnDemandRequest budget leaves each miner a call unless `spent` names it.
 */
function setUp(
  mode: OnDemandMode,
  count: number,
  serving: number,
  spent: number[] = [],
  faults: Record<number, MinerFailureReason | MinerCallError> = {},
  /** Milliseconds a miner's call takes before its fault. */
  slowMs: Record<number, number> = {},
  /** What a serving miner answers OnDemandRequest with (by default nothing). */
  entities: Record<number, unknown[]> = {},
) {
  const miners = Array.from(
    { length: count },
    (_, index) =>
      ({
        uid: index + 1,
        hotkey: `hk${index + 1}`,
        coldkey: `ck${index + 1}`,
        axonUrl: `http://127.0.0.1:${9001 + index}`,
        credibility: 0.9,
        incentive: 0.1,
        state: 'active',
      }) as ServingMiner,
  );
  const refused = new Set<string>();
  const openCircuits = new Set<number>();
  const onDemandCalls: number[] = [];
  /** Every call's arguments, as the client was given them. */
  const callArgs: unknown[][] = [];
  const client = {
    mayAsk: (hotkey: string) => !refused.has(hotkey),
    refusalOf: (hotkey: string) => (refused.has(hotkey) ? 'not_served' : undefined),
    isCircuitOpen: ({ uid }: { uid: number }) => openCircuits.has(uid),
    call: (target: MinerTarget, synapse: SynapseName, ...rest: unknown[]) => {
      onDemandCalls.push(target.uid);
      callArgs.push([target, synapse, ...rest]);
      const fault = faults[target.uid];
      if (fault)
        return new Promise((_, reject) =>
          setTimeout(
            () =>
              reject(fault instanceof MinerCallError ? fault : new MinerCallError(fault, fault)),
            slowMs[target.uid] ?? 0,
          ),
        );
      if (synapse === 'OnDemandRequest' && target.uid > serving) {
        refused.add(target.hotkey);
        return Promise.reject(new MinerCallError('not_served', 'HTTP 404: not found'));
      }
      return Promise.resolve(replyOf({ data: entities[target.uid] ?? [] }, 1));
    },
  } as unknown as MinerClient;
  const stored = { answer: jest.fn(() => Promise.resolve(STORED)) };
  /** The erased-authors register's authors (authorKey). */
  const erased = new Set<string>();
  /** No index loaded, as before any sync. */
  const index = {
    indexFreshness: jest.fn((): Promise<IndexFreshness> =>
      Promise.resolve({
        loaded: 0,
        usable: 0,
        unusable: { failing: 0, addressRefused: 0, deregistered: 0, noAxon: 0 },
        failingUntil: null,
        newestSyncedAt: null,
        oldestSyncedAt: null,
        lastReadAt: null,
      }),
    ),
  };
  const config = testConfig({
    network: {
      onDemandMode: mode,
      minersPerQuery: 3,
      quorum: 2,
      queryDeadlineMs: 2000,
      indexSync: INDEX_SYNC,
    },
  });
  let now = Date.parse('2026-01-15T12:00:00Z');
  const clock = { now: () => new Date(now) } as Clock;
  const metagraph = {
    minersServingData: () => miners,
    minerCalls: () => ({ allowed: true }),
  } as unknown as MetagraphService;
  const credibility = {
    record: () => undefined,
    recordState: jest.fn(),
  } as unknown as CredibilityRecorder;
  const budgets = {
    budgetOf: () => ({ calls: 8, windowMs: 3_600_000 }),
    left: (hotkeys: string[]) =>
      Promise.resolve(
        new Map(
          hotkeys.map((hotkey) => [
            hotkey,
            spent.some((uid) => `hk${uid}` === hotkey)
              ? // Miner 1's oldest counted call leaves the window first.
                {
                  left: 0,
                  nextAt: new Date(Date.parse(SPENT_UNTIL) + Number(hotkey.slice(2)) * 60_000),
                }
              : { left: 3, nextAt: null },
          ]),
        ),
      ),
  } as unknown as CallBudgets;
  const live = new LiveQueryService(
    metagraph,
    client,
    credibility,
    budgets,
    config,
    new MetricsService(),
    clock,
  );
  const service = new NetworkService(
    metagraph,
    client,
    {} as MinersRepository,
    credibility,
    {} as BucketReader,
    budgets,
    config,
    stored as unknown as StoredDataService,
    live,
    index as unknown as MinerIndexService,
    erasedAuthors(erased),
  );
  const advance = (ms: number) => (now += ms);
  return {
    service,
    stored,
    index,
    onDemandCalls,
    callArgs,
    refused,
    openCircuits,
    advance,
    miners,
    credibility,
    erased,
  };
}

/** The register's on-demand read over `erased`, as ErasedAuthorsRepository answers it. */
function erasedAuthors(erased: ReadonlySet<string>): ErasedAuthorsRepository {
  return {
    withoutErased: (_source: unknown, items: readonly DataItem[]) =>
      Promise.resolve(items.filter((item) => !erased.has(authorOfItem(item)))),
  } as unknown as ErasedAuthorsRepository;
}

// A budget audit read the index sync's calls in the call lines as users' (`purpose: "user"`).
it("calls GetMinerIndex as the index sync's, not a user's", async () => {
  const { service, callArgs, miners } = setUp('live', 1, 0);
  await service.fetchMinerIndex(miners[0], new Date()).catch(() => undefined);
  expect(callArgs.map(([, synapse, , , purpose]) => [synapse, purpose])).toEqual([
    ['GetMinerIndex', 'sync'],
  ]);
});

describe(`${NetworkService.name} on-demand modes`, () => {
  // How users' queries are answered is logged when it changes (AnswerPathLog): kept out of the
  // test output; the tests that read it spy on it themselves.
  beforeEach(() => jest.spyOn(Logger.prototype, 'log').mockImplementation(() => undefined));
  afterEach(() => jest.restoreAllMocks());

  it('live: asks miners by OnDemandRequest, even when they refuse it', async () => {
    const { service, stored } = setUp('live', 3, 0);
    const result = await service.query(QUERY);
    expect(result.origin).toBe('live');
    expect(result.error).toMatch(/failed/);
    expect(stored.answer).not.toHaveBeenCalled();
  });

  it('live: asks only miners with an OnDemandRequest call left in their budget', async () => {
    const { service, onDemandCalls } = setUp('live', 3, 3, [1, 3]);
    await service.query(QUERY);
    expect(onDemandCalls).toEqual([2]);
  });

  it('live: does not ask a miner whose circuit is open', async () => {
    // A miner that keeps failing is cut off: asking it would only spend a place among the query's
    // miners.
    const { service, onDemandCalls, openCircuits } = setUp('live', 3, 3);
    openCircuits.add(2);
    await service.query(QUERY);
    expect(onDemandCalls.sort()).toEqual([1, 3]);
  });

  it('live: a miner still silent when the quorum answered is no failure of that answer', async () => {
    // Its call goes on after the response: what it comes to counts for credibility, not here.
    // Answers with items: empty ones are no quorum.
    const held = [toWireEntity(X_POST)];
    const { service } = setUp(
      'live',
      3,
      3,
      [],
      { 3: 'http_error' },
      { 3: 50 },
      { 1: held, 2: held },
    );
    const result = await service.query({ ...QUERY, keywords: [] });
    expect(result).toMatchObject({
      minersQueried: 3,
      minersResponded: 2,
      deadlineReached: false,
    });
    expect(result.minersFailed).toEqual({ count: 0, reasons: {} });
  });

  // An erased author's live posts come straight from miners: the register keeps them out of a
  // user's answer (and so of the cache it is kept in); a task's page stays whole for its paging,
  // its insert leaves them out.
  it("live: leaves an erased author's items out of a user's answer, not out of a task's", async () => {
    const held = [toWireEntity(X_POST)];
    const { service, erased } = setUp('live', 3, 3, [], {}, {}, { 1: held, 2: held, 3: held });
    const asked = { ...QUERY, keywords: [] };
    expect((await service.query(asked)).items).toHaveLength(1);
    erased.add(authorOfItem(X_POST));
    expect((await service.query(asked)).items).toEqual([]);
    expect((await service.query(asked, 'task')).items).toHaveLength(1);
  });

  // A straggler's call runs to its own deadline: cut at a grace after the quorum (an abort signal
  // passed along), an honest miner slower than the others was scored as a timeout (an audit's).
  it('live: gives each call the whole query deadline and nothing that cuts it shorter', async () => {
    const { service, callArgs } = setUp('live', 3, 3);
    await service.query(QUERY);
    expect(callArgs.length).toBeGreaterThan(0);
    for (const args of callArgs) expect(args.slice(3)).toEqual([2000, 'user']);
  });

  // A task pages back past an answer cut by the limit, whatever the checks dropped of it.
  it("live: says when a miner's answer held the query's limit, counting what the checks dropped", async () => {
    // Every miner sends the same (which answers reach the quorum first is chosen at random).
    const garbage = (count: number) => {
      const entities = Array.from({ length: count }, () => ({}));
      return { 1: entities, 2: entities, 3: entities };
    };
    const cut = setUp('live', 3, 3, [], {}, {}, garbage(QUERY.limit));
    const short = setUp('live', 3, 3, [], {}, {}, garbage(QUERY.limit - 1));
    expect(await cut.service.query(QUERY)).toMatchObject({ limitReached: true, items: [] });
    expect((await short.service.query(QUERY)).limitReached).toBe(false);
  });

  // Whatever the call: a success with the circuit closed (MinerCircuits) clears a `failing` that
  // another replica's circuit, or this one's before a restart, recorded; written only then.
  it('records a miner active when it answers while recorded failing, and nothing when it was active', () => {
    let listener: CircuitListener = () => undefined;
    const client = {
      onCircuitChange: (given: CircuitListener) => (listener = given),
      onAddressRefused: () => undefined,
    } as unknown as MinerClient;
    const states: Record<number, MinerState> = { 1: 'active', 2: 'failing' };
    const metagraph = {
      stateOf: ({ uid }: { uid: number }) => states[uid],
    } as unknown as MetagraphService;
    const credibility = { recordState: jest.fn() } as unknown as CredibilityRecorder;
    const budgets = { setCheckedNetwork: () => undefined } as unknown as CallBudgets;
    new NetworkService(
      metagraph,
      client,
      {} as MinersRepository,
      credibility,
      {} as BucketReader,
      budgets,
      testConfig(),
      {} as StoredDataService,
      {} as LiveQueryService,
      {} as MinerIndexService,
      {} as ErasedAuthorsRepository,
    ).onModuleInit();

    const miner = (uid: number) => ({ uid, hotkey: `hk-${uid}` });
    listener(miner(1), false);
    listener(miner(2), false);
    listener(miner(3), true);

    expect(jest.mocked(credibility.recordState).mock.calls).toEqual([
      [miner(2), 'active'],
      [miner(3), 'failing'],
    ]);
  });

  it('live: says no miner answered within the deadline when every one was still silent at it', async () => {
    // Their calls fail 300 ms after the 2 s deadline: the answer does not wait for them.
    const silent = { 1: 2300, 2: 2300, 3: 2300 };
    const { service } = setUp(
      'live',
      3,
      3,
      [],
      { 1: 'timeout', 2: 'timeout', 3: 'timeout' },
      silent,
    );
    const result = await service.query(QUERY);
    expect(result.error).toBe('No miner answered within the deadline');
    expect(result).toMatchObject({ deadlineReached: true, minersResponded: 0 });
    expect(result.minersFailed).toEqual({ count: 3, reasons: { timeout: 3 } });
  });

  // Three miners answering 500 at once beside one silent blamed the deadline (an error texts
  // audit's finding): raising QUERY_DEADLINE_MS would change nothing.
  it('live: says every queried miner failed, not the deadline, when not every one timed out', async () => {
    // Miner 3's call fails 300 ms after the 2 s deadline, as a silent miner's does.
    const { service } = setUp(
      'live',
      3,
      3,
      [],
      { 1: 'http_error', 2: 'http_error', 3: 'timeout' },
      { 3: 2300 },
    );
    const result = await service.query(QUERY);
    expect(result.error).toBe('Every queried miner failed');
    expect(result.minersFailed.reasons).toEqual({ http_error: 2, timeout: 1 });
  });

  // Still silent at the deadline, a miner failed by it: two busy ones beside it are not "every
  // queried miner was busy" (a review's finding).
  it('live: counts the miners silent at the deadline among the failures it names', async () => {
    const { service } = setUp(
      'live',
      3,
      3,
      [],
      { 1: 'busy', 2: 'busy', 3: 'timeout' },
      { 3: 2300 },
    );
    expect((await service.query(QUERY)).error).toBe('Every queried miner failed');
  });

  // With every circuit open the answer was a bare "No miners available" (an error texts audit).
  it('live: says every miner is failing when every circuit is open', async () => {
    const { service, openCircuits } = setUp('live', 2, 2);
    openCircuits.add(1);
    openCircuits.add(2);
    expect((await service.query(QUERY)).error).toBe(
      'No miners available: 2 of 2 failing (circuit open)',
    );
  });

  it('live: counts the refusals and the failing miners when only some refused OnDemandRequest', async () => {
    // Miners 2 and 3 answer 404; once miner 1 is cut off too, no miner is left to ask.
    const { service, openCircuits } = setUp('live', 3, 1);
    await service.query(QUERY);
    openCircuits.add(1);
    const result = await service.query(QUERY);
    expect(result.error).toBe(
      'No miners available: 1 of 3 failing (circuit open); 2 of 3 refused OnDemandRequest recently (404: not served, 403: blacklisted, 401: unverified)',
    );
  });

  it('live: says the budget is spent when no miner has a call left', async () => {
    const { service, onDemandCalls } = setUp('live', 2, 2, [1, 2]);
    const result = await service.query(QUERY);
    expect(onDemandCalls).toEqual([]);
    expect(result.error).toBe(
      "No miners available: all 2 have spent this validator's OnDemandRequest budget for the hour (MINER_CALL_BUDGETS); the first call frees up at 2026-01-15T12:21:00.000Z",
    );
  });

  // Every miner with a call left failed while the answering ones were out of budget: without a
  // count of those left out, it read as every miner failing (an on-call audit's finding).
  it('live: counts the miners left out for want of budget apart from the failed ones', async () => {
    const { service, onDemandCalls } = setUp('live', 5, 5, [1, 2, 3], {
      4: 'timeout',
      5: 'timeout',
    });
    const result = await service.query(QUERY, 'task');
    expect(onDemandCalls.sort()).toEqual([4, 5]);
    expect(result).toMatchObject({
      error: 'Every queried miner failed',
      minersQueried: 2,
      minersFailed: { count: 2, reasons: { timeout: 2 } },
      minersWithoutBudget: 3,
    });
  });

  it('live: counts every available miner as left out when none has a call left', async () => {
    const { service } = setUp('live', 2, 2, [1, 2]);
    const result = await service.query(QUERY);
    expect(result).toMatchObject({ minersQueried: 0, minersWithoutBudget: 2 });
  });

  it('live: counts none left out when every miner had a call', async () => {
    const { service } = setUp('live', 3, 3);
    expect((await service.query(QUERY)).minersWithoutBudget).toBe(0);
  });

  it('stored: answers from stored data, with its counts', async () => {
    const { service, stored, onDemandCalls } = setUp('stored', 3, 3);
    const result = await service.query(QUERY);
    expect(onDemandCalls).toEqual([]);
    expect(stored.answer).toHaveBeenCalledWith(QUERY, 'user', 2000);
    expect(result).toMatchObject({
      origin: 'stored',
      minersQueried: 2,
      minersResponded: 2,
      itemsDroppedInvalid: 4,
      consensus: 0.5,
      hedged: 0,
      minersEmpty: 1,
      minersPassedChecks: 1,
      stored: {
        coverage: 'complete',
        buckets: { planned: 3, fromStore: 1, fetchedNow: 2, missing: 0 },
        oldestFetchedAt: STORED.oldestFetchedAt,
      },
    });
  });

  it('stored: an answer that could only read the store and found nothing is an error, not "no data"', async () => {
    const { service, stored } = setUp('stored', 3, 3);
    stored.answer.mockResolvedValueOnce({ ...STORED, coverage: 'partial', namesLabels: false });
    const result = await service.query({ ...QUERY, keywords: ['dollar'] });
    expect(result.items).toEqual([]);
    expect(result.error).toBe(partialAndEmpty('configured'));
    expect(result.error).toMatch(/stored data only \(ON_DEMAND_MODE=stored\)/);
  });

  it('stored: a partial answer with items, or a complete one without, is no error', async () => {
    const { service, stored } = setUp('stored', 3, 3);
    stored.answer.mockResolvedValueOnce({
      ...STORED,
      coverage: 'partial',
      items: [{ uri: 'https://x.com/a/status/1' } as DataItem],
    });
    expect((await service.query(QUERY)).error).toBeUndefined();
    expect((await service.query(QUERY)).error).toBeUndefined();
  });

  it('stored: an answer short of buckets is partial, and when it found nothing no error says it names no label', async () => {
    const { service, stored } = setUp('stored', 3, 3);
    const short: StoredAnswer = {
      ...STORED,
      coverage: 'partial',
      buckets: { planned: 3, fromStore: 1, fetchedNow: 1, missing: 1 },
    };
    stored.answer.mockResolvedValueOnce(short);
    const result = await service.query(QUERY);
    expect(result.items).toEqual([]);
    expect(result.error).toBeUndefined();
    expect(result.stored).toEqual({
      coverage: 'partial',
      buckets: { planned: 3, fromStore: 1, fetchedNow: 1, missing: 1 },
      oldestFetchedAt: STORED.oldestFetchedAt,
    });
  });

  // Partial with no bucket missing was taken for "names no label": a labelled answer with a
  // holder's copy unread, or a range reaching before the horizon, would have been told to add one.
  it('stored: a labelled partial answer with no bucket missing that found nothing is no error', async () => {
    const { service, stored } = setUp('stored', 3, 3);
    stored.answer.mockResolvedValueOnce({ ...STORED, coverage: 'partial' });
    const result = await service.query(QUERY);
    expect(result.error).toBeUndefined();
    expect(result.stored?.coverage).toBe('partial');
  });

  it('stored: a labelled answer that found nothing because no index is loaded is an error saying so', async () => {
    const { service, stored } = setUp('stored', 3, 3);
    const unindexed: StoredAnswer = {
      ...STORED,
      indexLoaded: false,
      coverage: 'partial',
      buckets: { planned: 0, fromStore: 0, fetchedNow: 0, missing: 0 },
    };
    stored.answer.mockResolvedValueOnce(unindexed);
    const result = await service.query(QUERY);
    expect(result.items).toEqual([]);
    expect(result.error).toBe(indexNotLoaded(INDEX_SYNC));
    expect(result.error).toMatch(/index is not loaded \(no miner's index has been read yet\)/);
    // The next sync may be an interval away (every miner's call failed): no promise of minutes.
    expect(result.error).not.toMatch(/few minutes/);
    expect(result.error).toMatch(/by the next sync, at most 65 minutes after the last one started/);
    // What the store holds is still answered; a task's collection is an empty one.
    stored.answer.mockResolvedValueOnce({
      ...unindexed,
      items: [{ uri: 'https://x.com/a/status/1' } as DataItem],
    });
    expect((await service.query(QUERY)).error).toBeUndefined();
    stored.answer.mockResolvedValueOnce(unindexed);
    expect((await service.query(QUERY, 'task')).error).toBeUndefined();
  });

  it('stored: one that found nothing because every holder of a loaded index is failing says so, not "not loaded"', async () => {
    const { service, stored, index } = setUp('stored', 3, 3);
    stored.answer.mockResolvedValue({
      ...STORED,
      indexLoaded: false,
      coverage: 'partial',
      buckets: { planned: 0, fromStore: 0, fetchedNow: 0, missing: 0 },
    });
    index.indexFreshness.mockResolvedValueOnce({
      loaded: 3,
      usable: 0,
      unusable: { failing: 2, addressRefused: 1, deregistered: 0, noAxon: 0 },
      failingUntil: new Date('2026-01-15T12:10:00Z'),
      newestSyncedAt: new Date('2026-01-15T11:00:00Z'),
      oldestSyncedAt: new Date('2026-01-15T10:00:00Z'),
      lastReadAt: new Date('2026-01-15T11:00:00Z'),
    });
    expect((await service.query(QUERY)).error).toBe(
      "The miners' data index: the indexes of 3 miners are loaded, but no miner holding one can " +
        'be asked now: 2 failing (circuit open; the first cooldown ends at 2026-01-15T12:10:00.000Z), ' +
        '1 refused by MINER_ALLOWED_NETWORKS. Only data already stored by this gateway was searched, ' +
        'and none matched.',
    );
    // Unreadable (the database away), or some holder usable again by now: the plain answer.
    index.indexFreshness.mockRejectedValueOnce(new Error('Connection terminated'));
    expect((await service.query(QUERY)).error).toBe(indexNotLoaded(INDEX_SYNC));
  });

  it("counts a task's stored collection that could not look as an empty one, not an error", async () => {
    const { service, stored } = setUp('stored', 3, 3);
    stored.answer.mockResolvedValueOnce({ ...STORED, coverage: 'partial', namesLabels: false });
    const result = await service.query({ ...QUERY, keywords: ['dollar'] }, 'task');
    expect(result.items).toEqual([]);
    expect(result.error).toBeUndefined();
  });

  it("passes a task's query on as one, so its calls leave users their reserve", async () => {
    const { service, stored } = setUp('stored', 3, 3);
    await service.query(QUERY, 'task');
    expect(stored.answer).toHaveBeenCalledWith(QUERY, 'task', 2000);
  });

  it('auto: live while a miner serves OnDemandRequest', async () => {
    const { service, stored } = setUp('auto', 3, 3);
    const result = await service.query(QUERY);
    expect(result.origin).toBe('live');
    expect(result.minersResponded).toBeGreaterThan(0);
    expect(stored.answer).not.toHaveBeenCalled();
  });

  it('auto: when every miner asked answers 404, the same query is answered from stored data', async () => {
    const { service, stored, onDemandCalls } = setUp('auto', 3, 0);
    const first = await service.query(QUERY);
    expect(first.origin).toBe('stored');
    expect(onDemandCalls.length).toBeGreaterThan(0);
    // Remembered: the next query asks no miner for OnDemandRequest.
    const asked = onDemandCalls.length;
    const second = await service.query(QUERY);
    expect(second.origin).toBe('stored');
    expect(onDemandCalls).toHaveLength(asked);
    expect(stored.answer).toHaveBeenCalledTimes(2);
  });

  it('auto: a round where no miner answered and one answered 404 is answered from stored data, whatever the other failures', async () => {
    const { service, stored, onDemandCalls } = setUp('auto', 4, 0, [], {
      3: 'network',
      4: 'timeout',
    });
    const result = await service.query(QUERY);
    expect([...onDemandCalls].sort()).toEqual([1, 2, 3, 4]);
    expect(result.origin).toBe('stored');
    expect(result.error).toBeUndefined();
    expect(stored.answer).toHaveBeenCalledTimes(1);
  });

  // Before, the stored answer had a whole deadline of its own after the live round's: a silent
  // miner held the response up to twice QUERY_DEADLINE_MS.
  it('auto: a stored answer after a live round has what is left of the deadline', async () => {
    const { service, stored } = setUp('auto', 3, 0, [], { 3: 'timeout' }, { 3: 400 });
    await service.query(QUERY);
    const [[, , deadlineMs]] = stored.answer.mock.calls as unknown as [unknown, unknown, number][];
    // Node's timers count whole milliseconds of libuv's clock, so the 400 ms timeout can end a
    // fraction of a millisecond early by performance.now() (CI saw 399.95).
    expect(deadlineMs).toBeLessThanOrEqual(2000 - 400 + 1);
    expect(deadlineMs).toBeGreaterThan(0);

    // Without a live round first, the whole deadline.
    await service.query(QUERY);
    expect((stored.answer.mock.calls as unknown as unknown[][])[1][2]).toBe(2000);
  });

  it('auto: once miners answered 404, miners never seen answering OnDemandRequest are no reason to go live', async () => {
    const { service, stored, onDemandCalls } = setUp('auto', 4, 0, [], {
      3: 'network',
      4: 'timeout',
    });
    await service.query(QUERY);
    const asked = onDemandCalls.length;
    // 1 and 2 are in their 404 cooldown; 3 and 4 (dead) are still available, but never served.
    const second = await service.query(QUERY);
    expect(onDemandCalls).toHaveLength(asked);
    expect(second.origin).toBe('stored');
    expect(stored.answer).toHaveBeenCalledTimes(2);
  });

  it('auto: once miners answered 404, goes live with the miners seen answering OnDemandRequest only, for an hour', async () => {
    const { service, stored, onDemandCalls, advance } = setUp('auto', 4, 1, [], { 3: 'network' });
    const first = await service.query(QUERY);
    expect(first).toMatchObject({ origin: 'live', minersResponded: 1 });
    onDemandCalls.length = 0;
    const second = await service.query(QUERY);
    expect(second).toMatchObject({ origin: 'live', minersResponded: 1 });
    expect(onDemandCalls).toEqual([1]);
    // An hour without hearing from it: it no longer counts as serving.
    advance(SERVED_MEMORY_MS + 1);
    onDemandCalls.length = 0;
    const third = await service.query(QUERY);
    expect(third.origin).toBe('stored');
    expect(onDemandCalls).toEqual([]);
    expect(stored.answer).toHaveBeenCalledTimes(1);
  });

  it('auto: once miners answered 404, a round where no miner seen serving answered is answered from stored data', async () => {
    const faults: Record<number, MinerFailureReason> = {};
    const { service, stored, onDemandCalls } = setUp('auto', 3, 1, [], faults);
    expect((await service.query(QUERY)).origin).toBe('live');
    // Miner 1, the one seen serving, stops answering: its round has no 404 in it.
    faults[1] = 'timeout';
    onDemandCalls.length = 0;
    const result = await service.query(QUERY);
    expect(onDemandCalls).toEqual([1]);
    expect(result.origin).toBe('stored');
    expect(result.error).toBeUndefined();
    expect(stored.answer).toHaveBeenCalledTimes(1);
  });

  it('auto: while every serving miner has spent its OnDemandRequest budget, answers from stored data', async () => {
    const { service, stored, onDemandCalls } = setUp('auto', 2, 2, [1, 2]);
    const result = await service.query(QUERY);
    expect(onDemandCalls).toEqual([]);
    expect(stored.answer).toHaveBeenCalledWith(QUERY, 'user', 2000);
    expect(result.origin).toBe('stored');
  });

  // The switch to stored data was silent at every level (a log audit's finding).
  it("auto: logs the change to stored data in how users' queries are answered, once", async () => {
    const logged = jest.spyOn(Logger.prototype, 'log').mockImplementation(() => undefined);
    const spent = [1, 2];
    const { service } = setUp('auto', 2, 2, spent);
    const lines = () => logged.mock.calls.map(([line]) => String(line));

    expect((await service.query(QUERY)).origin).toBe('stored');
    await service.query(QUERY);
    await service.query(QUERY, 'task');
    expect(lines()).toEqual([
      "on-demand queries are answered from stored data: no miner with an OnDemandRequest call left in this validator's budget answered (MINER_CALL_BUDGETS)",
    ]);
    // Live again: said at most once per 10 minutes (answer-path-log.spec.ts).
    spent.length = 0;
    expect((await service.query(QUERY)).origin).toBe('live');
    expect(lines()).toHaveLength(1);
    logged.mockRestore();
  });

  it('auto: logs nothing while users are answered live from the start', async () => {
    const logged = jest.spyOn(Logger.prototype, 'log').mockImplementation(() => undefined);
    const { service } = setUp('auto', 3, 3);
    await service.query(QUERY);
    expect(logged).not.toHaveBeenCalled();
    logged.mockRestore();
  });

  it('auto: a stored answer for want of OnDemandRequest calls counts the miners left out', async () => {
    const { service } = setUp('auto', 2, 2, [1, 2]);
    const result = await service.query(QUERY);
    expect(result).toMatchObject({ origin: 'stored', minersWithoutBudget: 2 });
  });

  it('auto: a stored answer after a live round keeps its count of the miners left out', async () => {
    // Miner 1 is out of budget; 2 and 3 answer 404.
    const { service } = setUp('auto', 3, 0, [1]);
    const result = await service.query(QUERY);
    expect(result).toMatchObject({ origin: 'stored', minersWithoutBudget: 1 });
  });

  it('stored: counts no miner left out for budget: no live round was considered', async () => {
    const { service } = setUp('stored', 2, 2, [1, 2]);
    expect((await service.query(QUERY)).minersWithoutBudget).toBe(0);
  });

  it('auto: an empty stored answer for want of OnDemandRequest calls says so, not that miners refuse', async () => {
    const { service, stored } = setUp('auto', 2, 2, [1, 2]);
    stored.answer.mockResolvedValueOnce({ ...STORED, coverage: 'partial', namesLabels: false });
    const result = await service.query({ ...QUERY, keywords: ['dollar'] });
    // When to come back: budgets are rolling windows ("next hour" sent clients back too soon).
    const freeAt = new Date(Date.parse(SPENT_UNTIL) + 60_000);
    expect(result.error).toBe(partialAndEmpty('budget', freeAt));
    expect(result.error).toMatch(
      /OnDemandRequest calls for the hour \(the first call frees up at 2026-01-15T12:21:00.000Z\)/,
    );
  });

  it('auto: an empty stored answer after 404s says miners do not take on-demand queries', async () => {
    const { service, stored } = setUp('auto', 3, 0);
    // The round that met the 404s, then a query that asks no miner at all.
    for (let round = 0; round < 2; round++) {
      stored.answer.mockResolvedValueOnce({ ...STORED, coverage: 'partial', namesLabels: false });
      const result = await service.query({ ...QUERY, keywords: ['dollar'] });
      expect(result.origin).toBe('stored');
      expect(result.error).toBe(partialAndEmpty('refused'));
    }
  });

  it('auto: live again as soon as one miner has a call left', async () => {
    const { service, stored, onDemandCalls } = setUp('auto', 2, 2, [1]);
    const result = await service.query(QUERY);
    expect(onDemandCalls).toEqual([2]);
    expect(result.origin).toBe('live');
    expect(stored.answer).not.toHaveBeenCalled();
  });

  // The miners with a call left were the failing ones: an error while stored data, with budgets
  // of its own, could answer (left by the entry "Miners left out for budget are counted").
  it('auto: a round in which no miner answered while some were left out for budget is answered from stored data', async () => {
    const { service, stored, onDemandCalls } = setUp('auto', 5, 5, [1, 2, 3], {
      4: 'timeout',
      5: 'network',
    });
    const result = await service.query(QUERY);
    expect(onDemandCalls.sort()).toEqual([4, 5]);
    expect(result).toMatchObject({ origin: 'stored', minersWithoutBudget: 3 });
    expect(result.error).toBeUndefined();
    // Only what is left of the deadline after the live round.
    const [, purpose, deadlineMs] = stored.answer.mock.calls[0] as unknown as unknown[];
    expect(purpose).toBe('user');
    expect(deadlineMs).toBeLessThanOrEqual(2000);
  });

  it('auto: an empty stored answer after such a round says the budget is spent', async () => {
    const { service, stored } = setUp('auto', 3, 3, [1, 2], { 3: 'timeout' });
    stored.answer.mockResolvedValueOnce({ ...STORED, coverage: 'partial', namesLabels: false });
    const result = await service.query({ ...QUERY, keywords: ['dollar'] });
    expect(result.origin).toBe('stored');
    expect(result.error).toBe(
      partialAndEmpty('budget', new Date(Date.parse(SPENT_UNTIL) + 60_000)),
    );
  });

  // Concurrent queries spent the asked miners' last calls between their choice and their call
  // (a replicas audit's finding: a burst's last queries answered "Every queried miner failed").
  it('auto: a round whose miners were out of calls when their turn came is answered from stored data', async () => {
    const { service, stored, onDemandCalls } = setUp('auto', 4, 4, [1], {
      2: 'no_budget',
      3: 'no_budget',
      4: 'timeout',
    });
    const result = await service.query(QUERY);
    expect(onDemandCalls.sort()).toEqual([2, 3, 4]);
    // Miner 1 before the round, 2 and 3 at their call.
    expect(result).toMatchObject({ origin: 'stored', minersWithoutBudget: 3 });
    expect(stored.answer).toHaveBeenCalledTimes(1);
  });

  it('auto: a round whose budget could not be read keeps the live error', async () => {
    const unreadable = () => new BudgetUnreadableError('OnDemandRequest', 'connection refused');
    const { service, stored } = setUp('auto', 2, 2, [], { 1: unreadable(), 2: unreadable() });
    const result = await service.query(QUERY);
    expect(result).toMatchObject({ origin: 'live', minersWithoutBudget: 0 });
    expect(result.error).toMatch(/^Every queried miner was out of calls when its turn came/);
    expect(stored.answer).not.toHaveBeenCalled();
  });

  it('auto: a round in which every asked miner failed and none was left out keeps the live error', async () => {
    const { service, stored } = setUp('auto', 2, 2, [], { 1: 'timeout', 2: 'network' });
    const result = await service.query(QUERY);
    expect(result).toMatchObject({ origin: 'live', error: 'Every queried miner failed' });
    expect(stored.answer).not.toHaveBeenCalled();
  });

  it('live: a round in which no miner answered while some were left out for budget keeps the live error', async () => {
    const { service, stored } = setUp('live', 3, 3, [1, 2], { 3: 'timeout' });
    const result = await service.query(QUERY);
    expect(result).toMatchObject({ origin: 'live', error: 'Every queried miner failed' });
    expect(stored.answer).not.toHaveBeenCalled();
  });

  it('auto: with no miner at all, gives the live path’s error rather than an empty answer', async () => {
    const { service, stored } = setUp('auto', 0, 0);
    const result = await service.query(QUERY);
    expect(result).toMatchObject({ origin: 'live', error: 'No miners available' });
    expect(stored.answer).not.toHaveBeenCalled();
  });
});

/**
 * NetworkService.readBucket over a real BucketReader: the index holds `holding` (most credible
 * first), each answering an empty bucket; the `spent` hotkeys' GetDataEntityBucket budget is
 * spent.
 */
function reading(holding: BucketHolder[], spent: ReadonlySet<string>) {
  const now = new Date('2026-01-01T10:30:00Z');
  const asked: number[] = [];
  const client = {
    mayAsk: () => true,
    call(target: MinerTarget): Promise<MinerReply> {
      asked.push(target.uid);
      return Promise.resolve(replyOf({ data_entities: [] }, 1));
    },
  } as unknown as MinerClient;
  const budgets = {
    left: (hotkeys: string[]) =>
      Promise.resolve(
        new Map<string, BudgetLeft>(
          hotkeys.map((hotkey) => [
            hotkey,
            spent.has(hotkey)
              ? { left: 0, nextAt: new Date(now.getTime() + 60_000) }
              : { left: 1, nextAt: null },
          ]),
        ),
      ),
  } as unknown as CallBudgets;
  const credibility = { record: () => undefined } as unknown as CredibilityRecorder;
  const config = testConfig({
    network: { queryDeadlineMs: 1000, bucketFetchTimeoutMs: 1000, minerMaxResponseBytes: 1000 },
  });
  const clock = { now: () => now } as Clock;
  const reader = new BucketReader(
    client,
    budgets,
    new MemoryItemStore(),
    new LiedBuckets(clock),
    credibility,
    clock,
    config,
  );
  /** The index's holders, up to the limit asked for, as the SQL reads them. */
  const index = {
    holders: jest.fn(
      (_source: number, _labelId: number | undefined, _bucket: number, limit: number) =>
        Promise.resolve(holding.slice(0, limit)),
    ),
  };
  const service = new NetworkService(
    { minerCalls: () => ({ allowed: true }) } as unknown as MetagraphService,
    client,
    {} as MinersRepository,
    credibility,
    reader,
    budgets,
    config,
    {} as StoredDataService,
    {} as LiveQueryService,
    index as unknown as MinerIndexService,
    erasedAuthors(new Set()),
  );
  return { service, index, asked };
}

describe(`${NetworkService.name}.readBucket`, () => {
  it('asks a less credible holder with a call left when the ten most credible have spent theirs', async () => {
    const holding = Array.from({ length: 12 }, (_, uid) => ({
      uid,
      hotkey: `hotkey-${uid}`,
      axonUrl: `http://127.0.0.1:${9000 + uid}`,
      labelId: 7,
      label: '#a',
      bytes: 0,
    }));
    const spent = new Set(holding.slice(0, 10).map((holder) => holder.hotkey));
    const { service, index, asked } = reading(holding, spent);

    expect(await service.readBucket(2, 100, 7)).toMatchObject({
      status: 'success',
      miner: { uid: 10, hotkey: 'hotkey-10' },
    });
    expect(asked).toEqual([10]);
    expect(index.holders).toHaveBeenCalledWith(2, 7, 100, HOLDERS_CONSIDERED);
  });

  // The index holds the bucket, but every holder is failing: "No miner holding bucket …
  // answered" said a miner was asked, and query_bucket answered "No data" before (an error texts
  // audit's finding). The store is looked up under the holders' labels (bucket-reader.spec.ts).
  it('says why no holder of an indexed bucket can be asked, when nothing of it was fetched before', async () => {
    const read = jest.fn(
      (_source: number, _bucket: number, _holders: unknown[], _labels?: unknown) =>
        Promise.resolve({
          status: 'error' as const,
          message: 'No miner holding bucket 7 answered',
        }),
    );
    const held = [1, 2, 3].map((uid) => ({ uid, hotkey: `hk${uid}`, label: '#ai', bytes: 10 }));
    const holders = jest.fn(
      (
        _source: number,
        _label: unknown,
        _bucket: number,
        _limit: number,
        options?: { askable?: boolean },
      ) => Promise.resolve(options?.askable === false ? held : []),
    );
    const service = new NetworkService(
      { minerCalls: () => ({ allowed: true }) } as unknown as MetagraphService,
      {} as MinerClient,
      {} as MinersRepository,
      {} as CredibilityRecorder,
      { read } as unknown as BucketReader,
      {} as CallBudgets,
      testConfig(),
      {} as StoredDataService,
      {} as LiveQueryService,
      { holders } as unknown as MinerIndexService,
      {} as ErasedAuthorsRepository,
    );
    expect(await service.readBucket(2, 7, 5)).toEqual({
      status: 'error',
      message:
        "Bucket 7 is in the miners' data index, but none of its 3 holders can be asked now (failing, at a refused address (address_refused) or serving no axon: system-status' miner_index counts them), and it was not fetched before",
    });
    expect(read).toHaveBeenCalledWith(2, 7, [], ['#ai', '#ai', '#ai']);
  });

  // A miner's live bucket passes no insert that would leave an erased author out.
  it("answers a bucket without an erased author's items", async () => {
    const post = X_POST as XItem;
    const other: XItem = { ...post, user: { ...post.user, username: 'someone_else' } };
    const bucket = {
      status: 'success' as const,
      cached: false,
      miner: { uid: 1, hotkey: 'hk1' },
      label: '#ai',
      claimedBytes: 10,
      fetchedAt: new Date(0),
      items: [X_POST, other],
    };
    const held = [{ uid: 1, hotkey: 'hk1', label: '#ai', bytes: 10 }];
    const service = new NetworkService(
      { minerCalls: () => ({ allowed: true }) } as unknown as MetagraphService,
      {} as MinerClient,
      {} as MinersRepository,
      {} as CredibilityRecorder,
      { read: () => Promise.resolve(bucket) } as unknown as BucketReader,
      {} as CallBudgets,
      testConfig(),
      {} as StoredDataService,
      {} as LiveQueryService,
      { holders: () => Promise.resolve(held) } as unknown as MinerIndexService,
      erasedAuthors(new Set([authorOfItem(X_POST)])),
    );

    expect(await service.readBucket(2, 7, 5)).toEqual({ ...bucket, items: [other] });
  });
});

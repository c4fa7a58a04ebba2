import { Clock } from '../common/clock/clock';
import { MetricsService } from '../common/metrics/metrics.service';
import { AppConfig } from '../config/app-config';
import { generateCorpus } from '../devnet/corpus';
import { toWireEntity } from '../devnet/miner-records';
import { CredibilityRecorder, MinerScore } from './credibility-recorder';
import { LiveQueryService, LiveRound } from './live-query.service';
import { MetagraphService } from './metagraph/metagraph.service';
import { ServingMiner } from './miner.entity';
import { NetworkQuery, XItem } from './protocol';
import { NetworkQueryResult } from './query-result';
import { CallBudgets } from './transport/call-budgets';
import { MinerClient } from './transport/miner-client';
import { MinerTarget, replyOf } from './transport/miner-reply';
import { BudgetUnreadableError, MinerCallError } from './transport/miner-failures';
import { MinerFailureReason } from './query-failures';
import { sample } from '../../test/support/prometheus-text';
import { testConfig } from '../../test/support/test-config';

const corpus = generateCorpus({
  seed: 13,
  now: new Date('2024-06-01T00:00:00Z'),
  size: { x: 40, reddit: 0 },
});
const posts = corpus.items.filter((item): item is XItem => item.source === 'X');

const QUERY: NetworkQuery = {
  source: 'x',
  usernames: [],
  keywords: [],
  keywordMode: 'all',
  startDate: null,
  endDate: new Date('2026-01-15T12:00:00Z'),
  limit: 10,
};

/** What a miner answers OnDemandRequest with, and after how long. */
interface MinerScript {
  coldkey: string;
  afterMs: number;
  items: XItem[];
  /** The call fails so, instead of answering the items. */
  failure?: MinerFailureReason;
  /** The call fails with this error (a subclass's), instead of answering the items. */
  error?: MinerCallError;
  /** The miner's circuit is open (it opened after `available` was read). */
  circuitOpen?: boolean;
}

/** A LiveQueryService over fake miners (uids 1..n, in the order given) on fake timers. */
function setUp(scripts: MinerScript[], network: Partial<AppConfig['network']> = {}) {
  const miners = scripts.map(
    (script, index) =>
      ({
        uid: index + 1,
        hotkey: `hk${index + 1}`,
        coldkey: script.coldkey,
        axonUrl: `http://127.0.0.1:${9001 + index}`,
        credibility: 0.9,
        incentive: 0.1,
        state: 'active',
      }) as ServingMiner,
  );
  const client = {
    refusalOf: () => undefined,
    isCircuitOpen: ({ uid }: { uid: number }) => scripts[uid - 1].circuitOpen === true,
    call: (target: MinerTarget) => {
      const script = scripts[target.uid - 1];
      return new Promise((resolve, reject) =>
        setTimeout(
          () =>
            script.error
              ? reject(script.error)
              : script.failure
                ? reject(new MinerCallError(script.failure, script.failure))
                : resolve(replyOf({ data: script.items.map(toWireEntity) }, script.afterMs)),
          script.afterMs,
        ),
      );
    },
  } as unknown as MinerClient;
  const scores: MinerScore[] = [];
  const credibility = {
    record: (observed: MinerScore[]) => scores.push(...observed),
    recordState: () => undefined,
  } as unknown as CredibilityRecorder;
  const config = testConfig({
    network: { minersPerQuery: 5, quorum: 3, queryDeadlineMs: 10_000, ...network },
  });
  const metrics = new MetricsService();
  const live = new LiveQueryService(
    {
      minersServingData: () => miners,
      minerCalls: () => ({ allowed: true }),
    } as unknown as MetagraphService,
    client,
    credibility,
    { budgetOf: () => undefined } as unknown as CallBudgets,
    config,
    metrics,
    { now: () => new Date('2026-01-15T12:00:00Z') } as Clock,
  );
  /** Runs one query to its end on the fake timers. */
  const round = async (query: NetworkQuery = QUERY): Promise<LiveRound> => {
    const pending = live.query(query, miners, { miners }, 'user');
    await jest.advanceTimersByTimeAsync(config.network.queryDeadlineMs);
    return pending;
  };
  const query = async (query: NetworkQuery = QUERY): Promise<NetworkQueryResult> =>
    (await round(query)).result;
  const scoreOf = (uid: number) => scores.find((score) => score.uid === uid)?.score;
  /** A sample of the metrics, by name and labels. */
  const metric = async (name: string, labels: Record<string, string>) =>
    sample(await metrics.scrape(), name, labels);
  return { query, round, scoreOf, live, miners, metric };
}

const uris = (result: NetworkQueryResult) => result.items.map((item) => item.uri);

describe(LiveQueryService.name, () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => {
    jest.useRealTimers();
    jest.restoreAllMocks();
  });

  // Three empty answers at 20 ms ended the round; the two miners holding the data, answering at
  // 300 ms, were scored late and the client got `data: []`, `no_data_available`, cached (an
  // audit's finding).
  it('waits for the miners still asked when the answers in are empty, and answers their items', async () => {
    const held = posts.slice(0, 2);
    const { query, scoreOf } = setUp([
      { coldkey: 'ck1', afterMs: 20, items: [] },
      { coldkey: 'ck2', afterMs: 20, items: [] },
      { coldkey: 'ck3', afterMs: 20, items: [] },
      { coldkey: 'ck4', afterMs: 300, items: held },
      { coldkey: 'ck5', afterMs: 300, items: held },
    ]);

    const result = await query();

    expect(new Set(uris(result))).toEqual(new Set(held.map((post) => post.uri)));
    expect(result).toMatchObject({
      minersResponded: 5,
      minersEmpty: 3,
      consensus: 1,
      deadlineReached: false,
    });
    // The data existed, on two miners' word: the empty answers are no longer neutral.
    expect([1, 2, 3, 4, 5].map(scoreOf)).toEqual([0, 0, 0, 1, 1]);
  });

  // Two hotkeys of one operator sending the same invented posts won the limit cut, with
  // consensus 1 and credibility 1 (an audit's finding).
  it('counts two miners of one coldkey as one holder: their copies corroborate nothing', async () => {
    // The invented posts are the newer: among equally held posts, the newer win the cut.
    const byTime = [...posts].sort((a, b) => Date.parse(b.datetime) - Date.parse(a.datetime));
    const [invented, real] = [byTime.slice(0, 2), byTime.slice(2, 4)];
    // A quorum of all four: the round holds every answer.
    const { query, scoreOf } = setUp(
      [
        { coldkey: 'operator', afterMs: 10, items: invented },
        { coldkey: 'operator', afterMs: 10, items: invented },
        { coldkey: 'ck3', afterMs: 20, items: real },
        { coldkey: 'ck4', afterMs: 20, items: real },
      ],
      { quorum: 4 },
    );

    const result = await query({ ...QUERY, limit: 2 });

    expect(new Set(uris(result))).toEqual(new Set(real.map((post) => post.uri)));
    expect(result.consensus).toBe(1);
    expect([1, 2, 3, 4].map(scoreOf)).toEqual([0.5, 0.5, 1, 1]);
  });

  it('says nothing of empty answers when nothing was corroborated', async () => {
    const { query, scoreOf } = setUp([
      { coldkey: 'ck1', afterMs: 20, items: [] },
      { coldkey: 'ck2', afterMs: 20, items: [] },
      { coldkey: 'ck3', afterMs: 30, items: posts.slice(0, 1) },
    ]);

    const result = await query();

    expect(result.items).toHaveLength(1);
    expect([1, 2, 3].map(scoreOf)).toEqual([null, null, 0.5]);
  });

  // Every miner answered and the checks dropped every item: the gateway answered "nothing
  // matched" (`no_data_available`, cached) when every miner had lied (a review's finding).
  describe('when every answer that came had all its items dropped', () => {
    const unmatched: NetworkQuery = { ...QUERY, keywords: ['nowhereinthecorpus'] };

    it('answers the error of every miner failing, the liars counted as invalid_items', async () => {
      const { query, scoreOf } = setUp([
        { coldkey: 'ck1', afterMs: 10, items: posts.slice(0, 3) },
        { coldkey: 'ck2', afterMs: 20, items: posts.slice(3, 5) },
        { coldkey: 'ck3', afterMs: 30, items: [], failure: 'http_error' },
      ]);

      const result = await query(unmatched);

      expect(result).toMatchObject({
        items: [],
        error: 'Every queried miner failed',
        minersResponded: 2,
        minersFailed: { count: 3, reasons: { invalid_items: 2, http_error: 1 } },
        itemsDroppedInvalid: 5,
      });
      expect([1, 2, 3].map(scoreOf)).toEqual([0, 0, 0]);
    });

    // Only the query's answer said it (invalid_items); /metrics had nothing of it.
    it('counts the items dropped by check, and the answers that counted for nothing', async () => {
      const { query, metric } = setUp([
        { coldkey: 'ck1', afterMs: 10, items: posts.slice(0, 3) },
        { coldkey: 'ck2', afterMs: 20, items: posts.slice(3, 5) },
        { coldkey: 'ck3', afterMs: 30, items: posts.slice(5, 6) },
      ]);

      await query({ ...unmatched, keywords: [], usernames: [posts[5].user.username] });

      expect(await metric('gateway_miner_items_dropped_total', { check: 'no_match' })).toBe(5);
      expect(await metric('gateway_miner_items_dropped_total', { check: 'malformed' })).toBe(0);
      expect(await metric('gateway_miner_answers_dropped_total', { reason: 'all_items' })).toBe(2);
      expect(await metric('gateway_miner_answers_dropped_total', { reason: 'most_items' })).toBe(0);
      // Three answers (the quorum), two of them dropped whole: no quorum.
      expect(await metric('gateway_quorum_outcomes_total', { outcome: 'partial' })).toBe(1);
      expect(await metric('gateway_quorum_outcomes_total', { outcome: 'quorum' })).toBe(0);
    });

    it('still answers a valid empty answer beside them as nothing matched', async () => {
      const { query } = setUp([
        { coldkey: 'ck1', afterMs: 10, items: posts.slice(0, 3) },
        { coldkey: 'ck2', afterMs: 20, items: [] },
      ]);

      const result = await query(unmatched);

      expect(result.error).toBeUndefined();
      expect(result).toMatchObject({
        items: [],
        minersEmpty: 1,
        minersFailed: { count: 1, reasons: { invalid_items: 1 } },
      });
    });
  });

  // Circuits opened by other queries' calls while the budget was read: a task collection asked
  // only such miners, refused unsent, while a healthy one was left (an audit's finding).
  it('leaves out the miners whose circuit opened after `available` was read', async () => {
    // Ranked in the order given.
    jest.spyOn(Math, 'random').mockReturnValue(0);
    const open = { afterMs: 0, items: [], failure: 'circuit_open' as const, circuitOpen: true };
    const { query } = setUp(
      [
        { coldkey: 'ck1', ...open },
        { coldkey: 'ck2', ...open },
        { coldkey: 'ck3', ...open },
        { coldkey: 'ck4', ...open },
        { coldkey: 'ck5', afterMs: 20, items: posts.slice(0, 1) },
      ],
      { minersPerQuery: 2, quorum: 1 },
    );

    const result = await query();

    expect(result.error).toBeUndefined();
    expect(result).toMatchObject({ minersQueried: 1, minersResponded: 1 });
    expect(result.minersFailed).toEqual({ count: 0, reasons: {} });
  });

  // Every miner with a call left had its circuit opened after the budget read: the answer said
  // all of them had spent the budget, which sent operators after MINER_CALL_BUDGETS.
  it('says the miners with calls left are failing, not that the budget is spent, when their circuits opened', async () => {
    const open = { afterMs: 0, items: [], circuitOpen: true };
    const { live, miners } = setUp([
      { coldkey: 'ck1', ...open },
      { coldkey: 'ck2', ...open },
      { coldkey: 'ck3', afterMs: 0, items: [] },
    ]);

    const { result } = await live.query(QUERY, miners, { miners: miners.slice(0, 2) }, 'task');

    expect(result).toMatchObject({
      error:
        "No miners available: the 2 with calls left are failing (circuit open); 1 has spent this validator's OnDemandRequest budget for the hour (MINER_CALL_BUDGETS)",
      minersQueried: 0,
      minersWithoutBudget: 1,
    });
  });

  it('says every miner was busy when each call was refused for the concurrency cap or a 503', async () => {
    const { query } = setUp([
      { coldkey: 'ck1', afterMs: 10, items: [], failure: 'busy' },
      { coldkey: 'ck2', afterMs: 10, items: [], failure: 'busy' },
    ]);

    const result = await query();

    expect(result.error).toMatch(
      /^Every queried miner was busy: .*\(MINER_CONCURRENCY\), or the miner answered 503$/,
    );
    expect(result.minersFailed).toEqual({ count: 2, reasons: { busy: 2 } });
  });

  // Concurrent queries spent the chosen miners' last calls before theirs (a replicas audit's
  // finding): NetworkService's `auto` reads them as left out for budget.
  it('counts the miners whose budget was spent when their turn came, apart from the other failures', async () => {
    const { round } = setUp([
      { coldkey: 'ck1', afterMs: 0, items: [], failure: 'no_budget' },
      { coldkey: 'ck2', afterMs: 10, items: [], failure: 'timeout' },
      { coldkey: 'ck3', afterMs: 0, items: [], failure: 'no_budget' },
      {
        coldkey: 'ck4',
        afterMs: 0,
        items: [],
        error: new BudgetUnreadableError('OnDemandRequest', 'connection refused'),
      },
    ]);

    const { result, spentWhenCalled } = await round();

    expect(spentWhenCalled).toBe(2);
    // The meta still counts them as queried and failed (docs/decisions.md, "Miners left out for
    // budget are counted").
    expect(result.minersFailed).toEqual({ count: 4, reasons: { no_budget: 3, timeout: 1 } });
    expect(result.minersWithoutBudget).toBe(0);
  });

  it('says every queried miner was out of calls when each was refused for its budget', async () => {
    const { round } = setUp([
      { coldkey: 'ck1', afterMs: 0, items: [], failure: 'no_budget' },
      { coldkey: 'ck2', afterMs: 0, items: [], failure: 'no_budget' },
    ]);

    const { result, spentWhenCalled } = await round();

    expect(spentWhenCalled).toBe(2);
    expect(result.error).toBe(
      "Every queried miner was out of calls when its turn came: other queries had just spent this validator's " +
        'OnDemandRequest budget for the hour (MINER_CALL_BUDGETS), or the budget could not be read',
    );
  });
});

import { BucketKey, DataItem } from '../protocol';
import { MinerFailureReason } from '../query-failures';
import { BucketHolding } from '../index/miner-index-read.repository';
import { bucketKeyOf, SelectedBucket } from './bucket-selection';
import { CallReport } from './contents-fetcher';
import { PlannedCall } from './holder-choice';
import { StoredItem } from './item-store';
import { StoredQueryPlan } from './query-plan';
import { FetchRound, summarize } from './stored-answer';

const plan = { coverage: 'complete', labels: ['#tao'] } as unknown as StoredQueryPlan;

/** `count` selected buckets, the first `fromStore` of them answered by the store. */
function selected(count: number, fromStore = 0): SelectedBucket[] {
  return Array.from(
    { length: count },
    (_, index) =>
      ({
        bucket: { source: 2, label: '#tao', timeBucket: index },
        fromStore: index < fromStore,
        unfetched: [],
      }) as unknown as SelectedBucket,
  );
}

function call(uid: number): PlannedCall {
  return { holder: { uid } } as PlannedCall;
}

function report(
  uid: number,
  outcome: {
    failure?: MinerFailureReason;
    budgetSpent?: true;
    score?: number;
    dropped?: number;
    returned?: number;
  },
): CallReport {
  return {
    uid,
    failure: outcome.failure,
    ...(outcome.budgetSpent ? { budgetSpent: true as const } : {}),
    returned: outcome.failure ? 0 : (outcome.returned ?? 5),
    dropped: outcome.dropped ?? 0,
    score: outcome.failure ? 0 : (outcome.score ?? 1),
    delivered: new Set(),
  };
}

/** A round whose calls all ended, with these outcomes. */
function round(ended: [PlannedCall, CallReport][], delivered: boolean[] = []): FetchRound {
  return {
    calls: ended.map(([planned]) => planned),
    reports: new Map(ended),
    delivered: new Map(delivered.map((ok, index) => [`b${index}`, ok])),
    done: Promise.resolve(),
  };
}

function stored(uri: string, fetchedAt: string, deliveredBy = ['hk1']): StoredItem {
  return {
    item: { uri } as DataItem,
    contentBytes: 10,
    deliveredBy,
    fetchedAt: new Date(fetchedAt),
  };
}

describe(summarize.name, () => {
  it('counts a miner whose calls all failed once, with one reason', () => {
    const first = call(1);
    const second = call(1);
    const answer = summarize(
      plan,
      selected(2),
      round([
        [first, report(1, { failure: 'timeout' })],
        [second, report(1, { failure: 'timeout' })],
      ]),
      [],
      { deadlineReached: false },
    );
    expect(answer.miners).toMatchObject({
      queried: 1,
      responded: 0,
      failed: { count: 1, reasons: { timeout: 1 } },
    });
  });

  it('does not count a miner as failed when another of its calls answered', () => {
    const answer = summarize(
      plan,
      selected(2),
      round([
        [call(1), report(1, { failure: 'timeout' })],
        [call(1), report(1, {})],
      ]),
      [],
      { deadlineReached: false },
    );
    expect(answer.miners).toMatchObject({ responded: 1, failed: { count: 0, reasons: {} } });
  });

  // `miners_failed.reasons` breaks the count down: a consumer adding them up gets the count.
  it('gives one reason per failed miner, so that the reasons add up to the count', () => {
    const answer = summarize(
      plan,
      selected(2),
      round([
        [call(1), report(1, { failure: 'timeout' })],
        [call(1), report(1, {})],
        [call(2), report(2, { failure: 'network' })],
        [call(2), report(2, { failure: 'timeout' })],
        [call(3), report(3, { failure: 'busy' })],
      ]),
      [],
      { deadlineReached: false },
    );
    expect(answer.miners.failed).toEqual({ count: 2, reasons: { network: 1, busy: 1 } });
  });

  // A holder of several buckets gets several GetContentsByBuckets calls in one round.
  it('counts as empty only a miner whose answered calls together sent nothing', () => {
    const answer = summarize(
      plan,
      selected(3),
      round([
        [call(1), report(1, { returned: 0 })],
        [call(1), report(1, { returned: 4 })],
        [call(2), report(2, { returned: 0 })],
        [call(2), report(2, { returned: 0 })],
        [call(3), report(3, { returned: 0 })],
        [call(3), report(3, { failure: 'timeout' })],
      ]),
      [],
      { deadlineReached: false },
    );
    expect(answer.miners).toMatchObject({ responded: 3, empty: 2 });
  });

  it('counts as passing the checks only a miner whose every answer scored 1', () => {
    const answer = summarize(
      plan,
      selected(2),
      round([
        [call(1), report(1, { score: 0.6 })],
        [call(2), report(2, {})],
        [call(3), report(3, {})],
        [call(3), report(3, { score: 0.99 })],
      ]),
      [],
      { deadlineReached: false },
    );
    expect(answer.miners).toMatchObject({ responded: 3, passedChecks: 1 });
  });

  it('dates the answer by the oldest fetch among its items', () => {
    const answer = summarize(
      plan,
      selected(1, 1),
      round([]),
      [
        stored('a', '2026-01-01T10:00:00Z'),
        stored('b', '2026-01-01T08:00:00Z'),
        stored('c', '2026-01-01T09:00:00Z'),
      ],
      { deadlineReached: false },
    );
    expect(answer.oldestFetchedAt).toEqual(new Date('2026-01-01T08:00:00Z'));
  });

  it('is no error when the store answers with items though every fetch failed', () => {
    const answer = summarize(
      plan,
      selected(1),
      round([[call(1), report(1, { failure: 'network' })]], [false]),
      [stored('a', '2026-01-01T10:00:00Z')],
      { deadlineReached: false },
    );
    expect(answer.error).toBeUndefined();
    expect(answer.buckets).toEqual({ planned: 1, fromStore: 0, fetchedNow: 0, missing: 1 });
  });

  // The missing hours may hold matches: `complete` had a client take them for hours without data.
  it('is partial when a bucket it needed is missing, and complete when none is', () => {
    const fetched = round([[call(1), report(1, {})]], [true, false]);
    const items = [stored('a', '2026-01-01T10:00:00Z')];
    const short = summarize(plan, selected(3, 1), fetched, items, { deadlineReached: true });
    expect(short.buckets).toEqual({ planned: 3, fromStore: 1, fetchedNow: 1, missing: 1 });
    expect(short.coverage).toBe('partial');
    const whole = round([[call(1), report(1, {})]], [true, true]);
    expect(summarize(plan, selected(3, 1), whole, items, { deadlineReached: false }).coverage).toBe(
      'complete',
    );
  });

  // Miners scrape on their own, so holders of one hour hold different posts: an hour read from
  // one holder's copy said `complete` (and "no data" when nothing matched), though another holder
  // listed in the index held the post (an audit's finding on the devnet).
  it('is partial while a holder of a planned bucket has a claim no fetch read, complete once read', () => {
    const key: BucketKey = { source: 2, label: '#tao', timeBucket: 100 };
    const holder = { uid: 3, hotkey: 'hk3', bytes: 4_000 } as BucketHolding;
    const unread = [
      { bucket: key, fromStore: true, unfetched: [holder] } as unknown as SelectedBucket,
    ];
    expect(summarize(plan, unread, round([]), [], { deadlineReached: false }).coverage).toBe(
      'partial',
    );

    const asked = { holder: { uid: 3 }, buckets: [{ bucket: key }] } as PlannedCall;
    const delivered = { ...report(3, {}), delivered: new Set([bucketKeyOf(key)]) };
    const read = summarize(plan, unread, round([[asked, delivered]]), [], {
      deadlineReached: false,
    });
    expect(read.coverage).toBe('complete');
    const failed = summarize(
      plan,
      unread,
      round([[asked, report(3, { failure: 'timeout' })]]),
      [],
      { deadlineReached: false },
    );
    expect(failed.coverage).toBe('partial');
  });

  it('adds up the contents every miner sent that the checks dropped', () => {
    const answer = summarize(
      plan,
      selected(2),
      round([
        [call(1), report(1, { dropped: 3, score: 0.5 })],
        [call(2), report(2, { dropped: 4, score: 0.5 })],
      ]),
      [],
      { deadlineReached: false },
    );
    expect(answer.itemsDroppedInvalid).toBe(7);
  });

  it('gives the share of items delivered by two miners to four decimals', () => {
    const answer = summarize(
      plan,
      selected(1, 1),
      round([]),
      [
        stored('a', '2026-01-01T10:00:00Z', ['hk1', 'hk2']),
        stored('b', '2026-01-01T10:00:00Z'),
        stored('c', '2026-01-01T10:00:00Z'),
      ],
      { deadlineReached: false },
    );
    expect(answer.consensus).toBe(0.3333);
  });

  // Live corroboration counts operators (mergeAnswers): two hotkeys of one coldkey were two
  // holders here, and their copies of an invented post corroborated it.
  it('counts the coldkeys that delivered an item, not its hotkeys, for consensus', () => {
    const coldkeys = new Map([
      ['hk1', 'operator'],
      ['hk2', 'operator'],
      ['hk3', 'other'],
    ]);
    const answer = summarize(
      plan,
      selected(1, 1),
      round([]),
      [
        stored('a', '2026-01-01T10:00:00Z', ['hk1', 'hk2']),
        stored('b', '2026-01-01T10:00:00Z', ['hk1', 'hk3']),
        stored('c', '2026-01-01T10:00:00Z', ['hk2', 'hk9']),
      ],
      { deadlineReached: false, coldkeys },
    );
    // A hotkey the metagraph no longer lists counts as an operator of its own.
    expect(answer.consensus).toBe(0.6667);
  });

  it('is no error when the buckets the store holds have no item the query matches', () => {
    // The miners did their part before: a true "no data", even though a fetch failed now.
    const answer = summarize(
      plan,
      selected(2, 1),
      round([[call(1), report(1, { failure: 'timeout' })]], [false]),
      [],
      { deadlineReached: false },
    );
    expect(answer.items).toEqual([]);
    expect(answer.error).toBeUndefined();
  });

  // A miner that answered with contents the checks all dropped was counted as one that answered,
  // and an answer whose every holder lied was a success without items (a review's finding).
  it('counts a miner whose every content sent was dropped as failed, invalid_items', () => {
    const answer = summarize(
      plan,
      selected(2),
      round([
        [call(1), report(1, { returned: 4, dropped: 4, score: 0 })],
        [call(1), report(1, { returned: 2, dropped: 2, score: 0 })],
        [call(2), report(2, { returned: 3, dropped: 1, score: 0.6 })],
        [call(3), report(3, { failure: 'network' })],
      ]),
      [stored('a', '2026-01-01T10:00:00Z')],
      { deadlineReached: false },
    );
    expect(answer.miners).toMatchObject({
      responded: 2,
      failed: { count: 2, reasons: { invalid_items: 1, network: 1 } },
    });
  });

  // Each had a call left when the round was planned; other queries spent it before its turn:
  // "no miner answered" read as the miners' failure (a scale audit's finding).
  it('says other queries spent the calls when every call of the round found its budget spent', () => {
    const answer = summarize(
      plan,
      selected(2),
      round(
        [
          [call(1), report(1, { failure: 'no_budget', budgetSpent: true })],
          [call(2), report(2, { failure: 'no_budget', budgetSpent: true })],
        ],
        [false, false],
      ),
      [],
      { deadlineReached: false },
    );
    expect(answer.error).toBe(
      "None of the 2 buckets holding this query's data can be fetched now: other queries of this gateway spent the calls left in their holders' budgets (2 asked) before this one's turn, and the store has no copy; ask again later",
    );
    // Not a budget that could not be read (Postgres away): no other query's doing.
    const unread = summarize(
      plan,
      selected(2),
      round(
        [
          [call(1), report(1, { failure: 'no_budget' })],
          [call(2), report(2, { failure: 'no_budget' })],
        ],
        [false, false],
      ),
      [],
      { deadlineReached: false },
    );
    expect(unread.error).toMatch(/^No miner holding this query's data answered with it/);
  });

  // Two 500s answered at once are not "not in time", though the deadline passed meanwhile.
  it('names the deadline only when every call failed by it', () => {
    const failed = (reason: MinerFailureReason) =>
      summarize(
        plan,
        selected(2),
        round(
          [
            [call(1), report(1, { failure: reason })],
            [call(2), report(2, { failure: reason })],
          ],
          [false, false],
        ),
        [],
        { deadlineReached: true },
      ).error;
    expect(failed('http_error')).toBe(
      "No miner holding this query's data answered with it (2 asked; meta.miners_failed.reasons says why)",
    );
    expect(failed('timeout')).toBe("No miner holding this query's data answered in time (2 asked)");
  });

  it('is an error when every holder asked sent only contents the checks dropped', () => {
    // The fetcher keeps none of their deliveries: no bucket is delivered.
    const answer = summarize(
      plan,
      selected(2),
      round(
        [
          [call(1), report(1, { returned: 4, dropped: 4, score: 0 })],
          [call(2), report(2, { returned: 3, dropped: 3, score: 0 })],
        ],
        [false, false],
      ),
      [],
      { deadlineReached: false },
    );
    expect(answer).toMatchObject({
      items: [],
      error:
        "No miner holding this query's data answered with it (2 asked; meta.miners_failed.reasons says why)",
      coverage: 'partial',
      buckets: { planned: 2, fromStore: 0, fetchedNow: 0, missing: 2 },
      miners: { responded: 2, failed: { count: 2, reasons: { invalid_items: 2 } } },
    });
  });

  // Each said "their holders' call budgets are spent, they refused recently, or what they sent
  // … failed the checks" (a hostile-miner audit's finding).
  describe('when no holder was asked', () => {
    const LIMIT = 8 * 1024 * 1024;
    /** Buckets whose holders claim these sizes, none from the store. */
    const claimed = (...sizes: number[]) =>
      sizes.map(
        (bytes, index) =>
          ({
            bucket: { source: 2, label: '#tao', timeBucket: index },
            fromStore: false,
            toAsk: [{ uid: 1, bytes } as BucketHolding],
            unfetched: [],
          }) as unknown as SelectedBucket,
      );
    const flags = (deadlineReached: boolean) => ({ deadlineReached, maxBytesPerCall: LIMIT });

    it('says every holder claims more than one call may carry', () => {
      const answer = summarize(plan, claimed(LIMIT + 1, 9 * LIMIT), round([]), [], flags(false));
      expect(answer.error).toBe(
        "None of the 2 buckets holding this query's data can be fetched: every holder claims more than a miner is asked to send at once (8388608 bytes, half of MINER_MAX_RESPONSE_BYTES), and the store has no copy; ask for a shorter range or another label",
      );
    });

    it('says another query is fetching them when the deadline passed awaiting its fetch', () => {
      const answer = summarize(plan, claimed(1000), round([]), [], flags(true));
      expect(answer.error).toBe(
        "The bucket holding this query's data was not fetched in time: another query of this gateway is fetching it; ask again shortly, it will be answered from what they send",
      );
    });

    it('names the claims too large beside the other reasons when only some are', () => {
      const answer = summarize(plan, claimed(1000, LIMIT + 1), round([]), [], flags(false));
      expect(answer.error).toBe(
        "None of the 2 buckets holding this query's data can be fetched now (the holders of some claim more than a miner is asked to send at once): their holders' call budgets are spent, they refused recently, or what they sent within the hour failed the checks, and the store has no copy",
      );
    });
  });
});

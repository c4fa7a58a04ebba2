import { CheckedAnswer } from './answer-checks';
import { DataItem } from './protocol';
import { BudgetUnreadableError, MinerCallError } from './transport/miner-failures';
import { MinerFailureReason } from './query-failures';
import { LateResult, QuorumOutcome, QuorumPlan, runQuorum } from './quorum';

interface Miner {
  uid: number;
}

/** What a fake miner does when asked: answer or fail after `afterMs`, or never reply at all. */
type Script =
  | { afterMs: number; answer: 'usable' | 'empty' | 'mostly dropped' }
  | { afterMs: number; failure: MinerFailureReason | 'thrown' }
  /** Refused before the call went out (MinerClient marks such failures `unsent`). */
  | { afterMs: number; refused: MinerFailureReason }
  | 'hang';

/** runQuorum reads an answer's counts only: the item itself is a stand-in. */
function usableAnswer(uid: number): CheckedAnswer {
  const item = { uri: `https://x.com/a/status/${uid}` } as DataItem;
  return { uid, coldkey: `ck${uid}`, returned: 1, valid: [item], dropped: 0 };
}

function emptyAnswer(uid: number): CheckedAnswer {
  return { uid, coldkey: `ck${uid}`, returned: 0, valid: [], dropped: 0 };
}

function mostlyDroppedAnswer(uid: number): CheckedAnswer {
  return { uid, coldkey: `ck${uid}`, returned: 3, valid: [], dropped: 3 };
}

/** Fake miners driven by (fake) timers; records who was asked and when. */
function scriptedMiners(scripts: Record<number, Script>) {
  const started = Date.now();
  const asked: { uid: number; at: number }[] = [];
  const ask = (miner: Miner): Promise<CheckedAnswer> => {
    asked.push({ uid: miner.uid, at: Date.now() - started });
    const script = scripts[miner.uid] ?? 'hang';
    return new Promise((resolve, reject) => {
      if (script === 'hang') return;
      setTimeout(() => {
        if ('answer' in script) {
          const answers = {
            usable: usableAnswer,
            empty: emptyAnswer,
            'mostly dropped': mostlyDroppedAnswer,
          };
          resolve(answers[script.answer](miner.uid));
        } else if ('refused' in script) {
          reject(Object.assign(new MinerCallError(script.refused, 'refused'), { unsent: true }));
        } else if (script.failure === 'thrown') {
          reject(new Error('socket hang up'));
        } else {
          reject(new MinerCallError(script.failure, 'scripted failure'));
        }
      }, script.afterMs);
    });
  };
  return { ask, askedUids: () => asked.map((entry) => entry.uid), asked };
}

function plan(overrides: Partial<QuorumPlan<Miner>> & { miners: number }): QuorumPlan<Miner> {
  const { miners, ...rest } = overrides;
  return {
    candidates: Array.from({ length: miners }, (_, index) => ({ uid: index + 1 })),
    fanout: 3,
    quorum: 2,
    deadlineMs: 10_000,
    hedgeAfterMs: 5_000,
    ...rest,
  };
}

/** Starts the quorum and exposes its outcome once (and only once) it has resolved. */
function start(
  quorumPlan: QuorumPlan<Miner>,
  ask: (miner: Miner) => Promise<CheckedAnswer>,
  onLate?: (result: LateResult) => void,
) {
  const state: { outcome?: QuorumOutcome; resolvedAt?: number } = {};
  const started = Date.now();
  void runQuorum(quorumPlan, ask, onLate).then((outcome) => {
    state.outcome = outcome;
    state.resolvedAt = Date.now() - started;
  });
  return state;
}

const answeredUids = (outcome: QuorumOutcome | undefined) =>
  outcome?.answers.map((answer) => answer.uid);

describe(runQuorum.name, () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('asks the first `fanout` candidates at once and keeps the rest as spares', async () => {
    const miners = scriptedMiners({ 1: 'hang', 2: 'hang', 3: 'hang' });

    start(plan({ miners: 6, fanout: 3 }), miners.ask);
    await jest.advanceTimersByTimeAsync(0);

    expect(miners.askedUids()).toEqual([1, 2, 3]);
  });

  it('resolves at quorum without waiting for the slowest miner', async () => {
    const miners = scriptedMiners({
      1: { afterMs: 20, answer: 'usable' },
      2: { afterMs: 30, answer: 'usable' },
      3: { afterMs: 4_000, answer: 'usable' },
    });

    const state = start(plan({ miners: 3, quorum: 2 }), miners.ask);
    await jest.advanceTimersByTimeAsync(29);
    expect(state.outcome).toBeUndefined();
    await jest.advanceTimersByTimeAsync(1);

    expect(state.resolvedAt).toBe(30);
    expect(answeredUids(state.outcome)).toEqual([1, 2]);
    expect(state.outcome).toMatchObject({
      queried: [1, 2, 3],
      unanswered: [3],
      hedged: 0,
      deadlineReached: false,
    });
  });

  it('reports answers and failures that arrive after the outcome through onLate', async () => {
    const miners = scriptedMiners({
      1: { afterMs: 10, answer: 'usable' },
      2: { afterMs: 10, answer: 'usable' },
      3: { afterMs: 500, answer: 'usable' },
      4: { afterMs: 700, failure: 'http_error' },
    });
    const late: LateResult[] = [];

    const state = start(plan({ miners: 4, fanout: 4, quorum: 2 }), miners.ask, (result) =>
      late.push(result),
    );
    await jest.advanceTimersByTimeAsync(10);
    expect(late).toEqual([]);
    await jest.advanceTimersByTimeAsync(1_000);

    expect(late).toEqual([
      { uid: 3, answer: usableAnswer(3) },
      { uid: 4, failure: 'http_error' },
    ]);
    expect(answeredUids(state.outcome)).toEqual([1, 2]);
    expect(state.outcome!.failures.size).toBe(0);
  });

  it('replaces a failed miner with the next spare at once', async () => {
    const miners = scriptedMiners({
      1: { afterMs: 10, failure: 'timeout' },
      2: { afterMs: 50, answer: 'usable' },
      3: 'hang',
      4: { afterMs: 30, answer: 'usable' },
    });

    const state = start(plan({ miners: 5, fanout: 3, quorum: 2 }), miners.ask);
    await jest.advanceTimersByTimeAsync(100);

    expect(miners.asked).toEqual([
      { uid: 1, at: 0 },
      { uid: 2, at: 0 },
      { uid: 3, at: 0 },
      { uid: 4, at: 10 },
    ]);
    expect(state.resolvedAt).toBe(50);
    expect(answeredUids(state.outcome)).toEqual([4, 2]);
    expect(state.outcome!.failures).toEqual(new Map([[1, 'timeout']]));
    expect(state.outcome!.hedged).toBe(0);
  });

  it('records a rejection that is not a miner call error as a network failure', async () => {
    const miners = scriptedMiners({ 1: { afterMs: 5, failure: 'thrown' } });

    const state = start(plan({ miners: 1, fanout: 1, quorum: 1 }), miners.ask);
    await jest.advanceTimersByTimeAsync(5);

    expect(state.outcome!.failures).toEqual(new Map([[1, 'network']]));
  });

  it('asks a spare for each chosen miner still silent after hedgeAfterMs', async () => {
    const miners = scriptedMiners({
      1: { afterMs: 10, answer: 'usable' },
      2: 'hang',
      3: 'hang',
      4: { afterMs: 50, answer: 'usable' },
      5: 'hang',
    });

    const state = start(plan({ miners: 6, fanout: 3, quorum: 2, hedgeAfterMs: 200 }), miners.ask);
    await jest.advanceTimersByTimeAsync(199);
    expect(miners.askedUids()).toEqual([1, 2, 3]);
    await jest.advanceTimersByTimeAsync(1);
    expect(miners.asked.slice(3)).toEqual([
      { uid: 4, at: 200 },
      { uid: 5, at: 200 },
    ]);
    await jest.advanceTimersByTimeAsync(50);

    expect(state.resolvedAt).toBe(250);
    expect(state.outcome).toMatchObject({
      hedged: 2,
      queried: [1, 2, 3, 4, 5],
      unanswered: [2, 3, 5],
    });
    expect(answeredUids(state.outcome)).toEqual([1, 4]);
  });

  it('hedges no more miners than there are spares', async () => {
    const miners = scriptedMiners({ 1: 'hang', 2: 'hang', 3: 'hang' });

    const state = start(
      plan({ miners: 4, fanout: 3, quorum: 2, hedgeAfterMs: 100, deadlineMs: 1_000 }),
      miners.ask,
    );
    await jest.advanceTimersByTimeAsync(1_000);

    expect(miners.askedUids()).toEqual([1, 2, 3, 4]);
    expect(state.outcome!.hedged).toBe(1);
  });

  it('asks no more spares than `fanout`, however many miners fail', async () => {
    const scripts: Record<number, Script> = {};
    for (let uid = 1; uid <= 10; uid++) scripts[uid] = { afterMs: 5, failure: 'http_error' };
    const miners = scriptedMiners(scripts);

    const state = start(plan({ miners: 10, fanout: 2, quorum: 2 }), miners.ask);
    await jest.advanceTimersByTimeAsync(100);

    expect(miners.askedUids()).toEqual([1, 2, 3, 4]);
    expect(state.outcome).toMatchObject({ answers: [], queried: [1, 2, 3, 4] });
    expect([...state.outcome!.failures.keys()]).toEqual([1, 2, 3, 4]);
  });

  // A task collection asked only miners whose circuit had opened since they were chosen, each
  // refused unsent, and the spares' cap left the healthy ones unasked (an audit's finding).
  it('replaces a miner refused as circuit_open without counting it against the spares', async () => {
    const miners = scriptedMiners({
      1: { afterMs: 0, refused: 'circuit_open' },
      2: { afterMs: 0, refused: 'circuit_open' },
      3: { afterMs: 0, refused: 'circuit_open' },
      4: { afterMs: 0, refused: 'circuit_open' },
      5: { afterMs: 20, answer: 'usable' },
      6: { afterMs: 30, answer: 'usable' },
    });

    const state = start(plan({ miners: 7, fanout: 2, quorum: 2 }), miners.ask);
    await jest.advanceTimersByTimeAsync(100);

    expect(miners.askedUids()).toEqual([1, 2, 3, 4, 5, 6]);
    expect(answeredUids(state.outcome)).toEqual([5, 6]);
  });

  // The same reasoning as circuit_open's: a call refused before it went out (our concurrency
  // cap to the miner, its budget spent since the budget read, its address) spent no budget,
  // which is what the cap bounds; counted, the healthy miners ranked after went unasked.
  it('replaces miners refused unsent as busy, no_budget or address_refused without counting them against the spares', async () => {
    const miners = scriptedMiners({
      1: { afterMs: 0, refused: 'busy' },
      2: { afterMs: 0, refused: 'no_budget' },
      3: { afterMs: 0, refused: 'address_refused' },
      4: { afterMs: 0, refused: 'busy' },
      5: { afterMs: 20, answer: 'usable' },
      6: { afterMs: 30, answer: 'usable' },
    });

    const state = start(plan({ miners: 7, fanout: 2, quorum: 2 }), miners.ask);
    await jest.advanceTimersByTimeAsync(100);

    expect(miners.askedUids()).toEqual([1, 2, 3, 4, 5, 6]);
    expect(answeredUids(state.outcome)).toEqual([5, 6]);
    expect(state.outcome!.failures).toEqual(
      new Map([
        [1, 'busy'],
        [2, 'no_budget'],
        [3, 'address_refused'],
        [4, 'busy'],
      ]),
    );
  });

  it('still caps the spares for the failures of calls that went out', async () => {
    const scripts: Record<number, Script> = { 1: { afterMs: 0, refused: 'circuit_open' } };
    for (let uid = 2; uid <= 10; uid++) scripts[uid] = { afterMs: 5, failure: 'http_error' };
    const miners = scriptedMiners(scripts);

    start(plan({ miners: 10, fanout: 2, quorum: 2 }), miners.ask);
    await jest.advanceTimersByTimeAsync(100);

    // Two asked, one in the circuit_open one's place, and `fanout` spares.
    expect(miners.askedUids()).toEqual([1, 2, 3, 4, 5]);
  });

  // A 503 is `busy` too, but the miner received the call and counted it.
  it('counts a busy miner that answered 503 against the spares', async () => {
    const scripts: Record<number, Script> = {};
    for (let uid = 1; uid <= 10; uid++) scripts[uid] = { afterMs: 5, failure: 'busy' };
    const miners = scriptedMiners(scripts);

    start(plan({ miners: 10, fanout: 2, quorum: 2 }), miners.ask);
    await jest.advanceTimersByTimeAsync(100);

    expect(miners.askedUids()).toEqual([1, 2, 3, 4]);
  });

  // Our shutdown, or a budget Postgres cannot read, refuses every miner alike: uncounted, each
  // would walk the whole ranking to the same refusal.
  it.each([
    ['shutdown', () => Object.assign(new MinerCallError('shutdown', 'x'), { unsent: true })],
    [
      'a budget that could not be read',
      () => Object.assign(new BudgetUnreadableError('OnDemandRequest', 'gone'), { unsent: true }),
    ],
  ])('counts refusals unsent for %s against the spares', async (_case, refusal) => {
    const asked: number[] = [];
    const ask = (miner: Miner) => {
      asked.push(miner.uid);
      return Promise.reject(refusal());
    };

    start(plan({ miners: 10, fanout: 2, quorum: 2 }), ask);
    await jest.advanceTimersByTimeAsync(100);

    expect(asked).toEqual([1, 2, 3, 4]);
  });

  it('counts hedged spares against the same cap as replacements', async () => {
    const miners = scriptedMiners({
      1: 'hang',
      2: { afterMs: 150, failure: 'malformed' },
      3: { afterMs: 150, failure: 'malformed' },
    });

    const state = start(
      plan({ miners: 8, fanout: 2, quorum: 2, hedgeAfterMs: 100, deadlineMs: 1_000 }),
      miners.ask,
    );
    await jest.advanceTimersByTimeAsync(1_000);

    expect(miners.askedUids()).toEqual([1, 2, 3, 4]);
    expect(state.outcome).toMatchObject({ hedged: 2, deadlineReached: true });
  });

  it('resolves at the deadline with what arrived, never waiting for a hung miner', async () => {
    const miners = scriptedMiners({
      1: { afterMs: 100, answer: 'usable' },
      2: 'hang',
      3: { afterMs: 200, failure: 'oversize' },
    });

    const state = start(plan({ miners: 3, quorum: 2, deadlineMs: 1_000 }), miners.ask);
    await jest.advanceTimersByTimeAsync(999);
    expect(state.outcome).toBeUndefined();
    await jest.advanceTimersByTimeAsync(1);

    expect(state.resolvedAt).toBe(1_000);
    expect(answeredUids(state.outcome)).toEqual([1]);
    expect(state.outcome).toMatchObject({
      queried: [1, 2, 3],
      unanswered: [2],
      deadlineReached: true,
    });
    expect(state.outcome!.failures).toEqual(new Map([[3, 'oversize']]));
  });

  it('resolves when every asked miner has settled and no spare is left, below quorum', async () => {
    const miners = scriptedMiners({
      1: { afterMs: 10, answer: 'usable' },
      2: { afterMs: 20, failure: 'http_error' },
      3: { afterMs: 40, failure: 'timeout' },
    });

    const state = start(plan({ miners: 3, quorum: 3, deadlineMs: 1_000 }), miners.ask);
    await jest.advanceTimersByTimeAsync(40);

    expect(state.resolvedAt).toBe(40);
    expect(state.outcome).toMatchObject({ deadlineReached: false, hedged: 0, unanswered: [] });
    expect(answeredUids(state.outcome)).toEqual([1]);
  });

  it('does not count a mostly dropped answer toward quorum and asks a spare for it', async () => {
    const miners = scriptedMiners({
      1: { afterMs: 10, answer: 'mostly dropped' },
      2: { afterMs: 20, answer: 'usable' },
      3: { afterMs: 30, answer: 'usable' },
    });

    const state = start(plan({ miners: 3, fanout: 2, quorum: 2 }), miners.ask);
    await jest.advanceTimersByTimeAsync(20);
    expect(miners.asked).toEqual([
      { uid: 1, at: 0 },
      { uid: 2, at: 0 },
      { uid: 3, at: 10 },
    ]);
    expect(state.outcome).toBeUndefined();
    await jest.advanceTimersByTimeAsync(20);

    expect(state.resolvedAt).toBe(40);
    expect(answeredUids(state.outcome)).toEqual([1, 2, 3]);
    expect(state.outcome!.failures.size).toBe(0);
  });

  // Three empty answers at 20 ms ended the round; the two miners with the data, well inside the
  // deadline, were only scored late and the client was told there was none (an audit's finding).
  it('does not end the round on empty answers: waits for the miners still asked', async () => {
    const miners = scriptedMiners({
      1: { afterMs: 20, answer: 'empty' },
      2: { afterMs: 20, answer: 'empty' },
      3: { afterMs: 20, answer: 'empty' },
      4: { afterMs: 300, answer: 'usable' },
      5: { afterMs: 300, answer: 'usable' },
    });

    const state = start(plan({ miners: 5, fanout: 5, quorum: 3 }), miners.ask);
    await jest.advanceTimersByTimeAsync(299);
    expect(state.outcome).toBeUndefined();
    await jest.advanceTimersByTimeAsync(1);

    expect(state.resolvedAt).toBe(300);
    expect(answeredUids(state.outcome)).toEqual([1, 2, 3, 4, 5]);
    expect(state.outcome).toMatchObject({ unanswered: [], deadlineReached: false });
  });

  it('ends early on a quorum of answers with items, whatever the empty ones', async () => {
    const miners = scriptedMiners({
      1: { afterMs: 10, answer: 'empty' },
      2: { afterMs: 20, answer: 'usable' },
      3: { afterMs: 30, answer: 'usable' },
      4: 'hang',
    });

    const state = start(plan({ miners: 4, fanout: 4, quorum: 2 }), miners.ask);
    await jest.advanceTimersByTimeAsync(30);

    expect(state.resolvedAt).toBe(30);
    expect(answeredUids(state.outcome)).toEqual([1, 2, 3]);
    expect(state.outcome).toMatchObject({ unanswered: [4], deadlineReached: false });
  });

  it('resolves once every asked miner answered empty, asking no spare for an empty answer', async () => {
    // Nothing may match the query: a spare for each empty answer would double its calls.
    const miners = scriptedMiners({
      1: { afterMs: 10, answer: 'empty' },
      2: { afterMs: 20, answer: 'empty' },
      3: { afterMs: 40, answer: 'empty' },
    });

    const state = start(plan({ miners: 6, fanout: 3, quorum: 2 }), miners.ask);
    await jest.advanceTimersByTimeAsync(39);
    expect(state.outcome).toBeUndefined();
    await jest.advanceTimersByTimeAsync(1);

    expect(state.resolvedAt).toBe(40);
    expect(miners.askedUids()).toEqual([1, 2, 3]);
    expect(state.outcome).toMatchObject({ unanswered: [], deadlineReached: false });
  });

  it('waits up to the deadline for a silent miner when the answers in are empty', async () => {
    const miners = scriptedMiners({
      1: { afterMs: 10, answer: 'empty' },
      2: { afterMs: 10, answer: 'empty' },
      3: 'hang',
    });

    const state = start(plan({ miners: 3, quorum: 2, deadlineMs: 1_000 }), miners.ask);
    await jest.advanceTimersByTimeAsync(1_000);

    expect(state.resolvedAt).toBe(1_000);
    expect(state.outcome).toMatchObject({ unanswered: [3], deadlineReached: true });
  });

  it('resolves once the few candidates there are have answered', async () => {
    const miners = scriptedMiners({
      1: { afterMs: 10, answer: 'usable' },
      2: { afterMs: 30, answer: 'usable' },
    });

    const state = start(plan({ miners: 2, fanout: 5, quorum: 3 }), miners.ask);
    await jest.advanceTimersByTimeAsync(30);

    expect(state.resolvedAt).toBe(30);
    expect(answeredUids(state.outcome)).toEqual([1, 2]);
    expect(state.outcome).toMatchObject({ queried: [1, 2], deadlineReached: false });
  });

  it('resolves at once with an empty outcome when there is no candidate', async () => {
    const ask = jest.fn<Promise<CheckedAnswer>, [Miner]>();

    const state = start(plan({ miners: 0 }), ask);
    await jest.advanceTimersByTimeAsync(0);

    expect(ask).not.toHaveBeenCalled();
    expect(state.outcome).toEqual({
      answers: [],
      failures: new Map(),
      unanswered: [],
      queried: [],
      hedged: 0,
      deadlineReached: false,
    });
  });

  it('asks nobody else once the outcome is in', async () => {
    const miners = scriptedMiners({
      1: { afterMs: 10, answer: 'usable' },
      2: { afterMs: 10, answer: 'usable' },
      3: { afterMs: 300, failure: 'timeout' },
    });

    const state = start(plan({ miners: 8, quorum: 2, hedgeAfterMs: 100 }), miners.ask);
    await jest.advanceTimersByTimeAsync(1_000);

    expect(state.resolvedAt).toBe(10);
    expect(miners.askedUids()).toEqual([1, 2, 3]);
    expect(jest.getTimerCount()).toBe(0);
  });
});

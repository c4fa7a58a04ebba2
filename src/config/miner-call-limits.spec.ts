import {
  callArrivalDelay,
  callBudgetExcesses,
  defaultCallBudgets,
  loopbackOnly,
  minerCallCeiling,
  mostCallsPerMinerWindow,
} from './miner-call-limits';
import { parseAllowedNetworks, parseCallBudgets } from './miner-network-settings';

const MARGIN_MS = 300_000;
/** The default timeouts: GetMinerIndex 120 s, the bucket calls 140 s, on-demand 10 s. */
const TIMEOUTS = {
  INDEX_FETCH_TIMEOUT_MS: 120_000,
  BUCKET_FETCH_TIMEOUT_MS: 140_000,
  QUERY_DEADLINE_MS: 10_000,
};
const DELAY = callArrivalDelay(TIMEOUTS);
const budget = (text: string) => parseCallBudgets(`GetMinerIndex=${text}`).GetMinerIndex!;

describe(callArrivalDelay.name, () => {
  // The miner counts a call when it reads it, which only the call's timeout bounds.
  it('is the longest miner-call timeout and 5 s', () => {
    expect(DELAY).toEqual({
      ms: 145_000,
      longest: 'BUCKET_FETCH_TIMEOUT_MS',
      longestMs: 140_000,
    });
    expect(
      callArrivalDelay({ ...TIMEOUTS, BUCKET_FETCH_TIMEOUT_MS: 30_000, QUERY_DEADLINE_MS: 100 }),
    ).toEqual({ ms: 125_000, longest: 'INDEX_FETCH_TIMEOUT_MS', longestMs: 120_000 });
    expect(
      callArrivalDelay({
        INDEX_FETCH_TIMEOUT_MS: 100,
        BUCKET_FETCH_TIMEOUT_MS: 100,
        QUERY_DEADLINE_MS: 120_000,
      }).longest,
    ).toBe('QUERY_DEADLINE_MS');
  });
});

describe(mostCallsPerMinerWindow.name, () => {
  it.each([
    ['1/h', MARGIN_MS, DELAY.ms, 1],
    // Counted an hour apart, the first arriving up to 145 s late: both meet in one window.
    ['1/h', 0, DELAY.ms, 2],
    ['1/h', 144_999, DELAY.ms, 2],
    ['1/h', 145_000, DELAY.ms, 1],
    // A delay of 15 s (timeouts of 10 s) needs a margin of 15 s only.
    ['1/h', 15_000, 15_000, 1],
    ['1/h', 14_999, 15_000, 2],
    ['2/h', MARGIN_MS, DELAY.ms, 2],
    ['2/2h', MARGIN_MS, DELAY.ms, 2],
    ['1/2h', 0, DELAY.ms, 1],
    ['1/30m', MARGIN_MS, DELAY.ms, 2],
    // A window counted exactly 30 minutes: calls at 0, 30 and 60 minutes, the first late.
    ['1/30m', 0, DELAY.ms, 3],
    ['1/58m', MARGIN_MS, DELAY.ms, 1],
    ['1/57m', MARGIN_MS, DELAY.ms, 2],
    ['10/20m', MARGIN_MS, DELAY.ms, 30],
    ['1/90s', 0, DELAY.ms, 42],
    ['0/h', MARGIN_MS, DELAY.ms, 0],
  ])(
    'lets %s (margin %d ms, delay %d ms) send a miner %d calls within 60 minutes',
    (text, margin, delay, most) => {
      expect(mostCallsPerMinerWindow(budget(text), margin, delay)).toBe(most);
    },
  );
});

describe(minerCallCeiling.name, () => {
  it("leaves the validator's evaluation its index and bucket calls, and all bulk and on-demand calls to the gateway", () => {
    expect(
      ['GetMinerIndex', 'GetDataEntityBucket', 'GetContentsByBuckets', 'OnDemandRequest'].map(
        (synapse) => [
          minerCallCeiling(synapse as never, true),
          minerCallCeiling(synapse as never, false),
        ],
      ),
    ).toEqual([
      [1, 2],
      [1, 2],
      [10, 10],
      [10, 10],
    ]);
  });
});

describe(callBudgetExcesses.name, () => {
  const excesses = (text: string, shares = true, margin = MARGIN_MS) =>
    callBudgetExcesses(parseCallBudgets(text, defaultCallBudgets(shares)), shares, margin, DELAY);

  it('finds none in the defaults, beside a validator or not', () => {
    expect(excesses('')).toEqual([]);
    expect(excesses('', false)).toEqual([]);
  });

  it('takes 1/h for GetMinerIndex beside a validator, and 10/h for the bulk call and on-demand', () => {
    expect(
      excesses(
        'GetMinerIndex=1/h,GetDataEntityBucket=1/h,GetContentsByBuckets=10/h,OnDemandRequest=10/h',
      ),
    ).toEqual([]);
  });

  it('takes 2/2h on a hotkey of its own only: the two calls may come together', () => {
    expect(excesses('GetMinerIndex=2/2h', false)).toEqual([]);
    expect(excesses('GetMinerIndex=2/2h')).toEqual([
      expect.stringMatching(
        /^MINER_CALL_BUDGETS: GetMinerIndex=2\/2h can send a miner 2 calls within 60 minutes/,
      ),
    ]);
    expect(excesses('GetMinerIndex=1/2h')).toEqual([]);
  });

  it('finds 1/30m for GetMinerIndex beside a validator, counting its margin', () => {
    expect(excesses('GetMinerIndex=1/30m')).toEqual([
      'MINER_CALL_BUDGETS: GetMinerIndex=1/30m can send a miner 2 calls within 60 minutes (its window counted 300 s longer, MINER_CALL_BUDGET_MARGIN_SECONDS, a call arriving up to 145 s after it is counted), but miners allow this hotkey 1 GetMinerIndex per 60 minutes beside the validator on the same hotkey (VALIDATOR_SHARES_HOTKEY=true: their 2 less the 1 of its evaluation); give it at most 1/h (or fewer calls over a longer window)',
    ]);
    // On a hotkey of its own the gateway has both calls.
    expect(excesses('GetMinerIndex=1/30m', false)).toEqual([]);
  });

  // Counted an hour apart, a call the miner read late and the next met in one of the miner's
  // windows, and the validator's evaluation after them was refused.
  it('refuses a margin shorter than a call may arrive after it is counted, naming it', () => {
    expect(excesses('', true, 0)).toEqual([
      "MINER_CALL_BUDGET_MARGIN_SECONDS: 0 s is shorter than the 145 s a call may arrive after it is counted (a miner counts it when it reads it, as late as the call's timeout: BUCKET_FETCH_TIMEOUT_MS=140000, the longest, and 5 s more), so GetMinerIndex=1/h can send a miner 2 calls within 60 minutes, but miners allow this hotkey 1 GetMinerIndex per 60 minutes beside the validator on the same hotkey (VALIDATOR_SHARES_HOTKEY=true: their 2 less the 1 of its evaluation); set it to at least 145 (the default is 300), or shorten BUCKET_FETCH_TIMEOUT_MS",
      expect.stringMatching(/^MINER_CALL_BUDGET_MARGIN_SECONDS: 0 s .* GetDataEntityBucket=1\/h /),
      expect.stringMatching(/^MINER_CALL_BUDGET_MARGIN_SECONDS: 0 s .* GetContentsByBuckets=8\/h /),
      expect.stringMatching(/^MINER_CALL_BUDGET_MARGIN_SECONDS: 0 s .* OnDemandRequest=8\/h /),
    ]);
    expect(excesses('', false, 144_000)).toHaveLength(4);
    expect(excesses('', true, 145_000)).toEqual([]);
    expect(excesses('', false, 145_000)).toEqual([]);
    // A window long enough needs no margin.
    const synapses = (lines: string[]) => lines.map((line) => /(\w+)=\S+ can send/.exec(line)?.[1]);
    expect(synapses(excesses('GetMinerIndex=1/2h,GetDataEntityBucket=1/2h', true, 0))).toEqual([
      'GetContentsByBuckets',
      'OnDemandRequest',
    ]);
  });

  it('finds each synapse above its limit, the audit’s budgets among them', () => {
    const found = excesses('GetContentsByBuckets=20/h,GetMinerIndex=5/h,GetDataEntityBucket=4/h');
    expect(found.map((line) => line.split(' can send')[0])).toEqual([
      'MINER_CALL_BUDGETS: GetMinerIndex=5/h',
      'MINER_CALL_BUDGETS: GetDataEntityBucket=4/h',
      'MINER_CALL_BUDGETS: GetContentsByBuckets=20/h',
    ]);
    expect(excesses('GetContentsByBuckets=11/h', false)).toHaveLength(1);
    expect(excesses('GetMinerIndex=2/h', false)).toEqual([]);
    expect(excesses('GetMinerIndex=3/h', false)).toHaveLength(1);
  });

  it('finds a removed budget for every synapse miners limit', () => {
    expect(excesses('none')).toHaveLength(4);
    const [line] = excesses('OnDemandRequest=none', false);
    expect(line).toBe(
      'MINER_CALL_BUDGETS: OnDemandRequest has no budget (none), but miners allow this hotkey 10 OnDemandRequest per 60 minutes (VALIDATOR_SHARES_HOTKEY=false: their whole limit); an unlimited gateway takes more and the miner refuses the rest of its window with 403',
    );
    expect(excesses('GetMinerIndex=none')[0]).toMatch(
      /, the validator's evaluation included \(the miner is scored as failing it\)$/,
    );
  });
});

describe(loopbackOnly.name, () => {
  it.each([
    ['loopback', true],
    ['127.0.0.1', true],
    ['::1', true],
    ['public', false],
    ['loopback,public', false],
    ['loopback,10.0.0.0/8', false],
    ['127.0.0.0/4', false],
  ])('%s: %s', (text, expected) => {
    expect(loopbackOnly(parseAllowedNetworks(text))).toBe(expected);
  });
});

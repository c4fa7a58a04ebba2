import {
  describeBehaviour,
  hasFaults,
  InvalidBehaviourError,
  parseFault,
  parseFaultSpec,
  validateBehaviour,
} from './behaviour';

describe('parseFaultSpec', () => {
  it('parses one fault per uid', () => {
    const faults = parseFaultSpec('2:hang, 3:fabricate,4:latency=200-400,5:500');
    expect(Object.fromEntries(faults)).toEqual({
      2: { hang: true },
      3: { fabricate: true },
      4: { latencyMs: { min: 200, max: 400 } },
      5: { http500: true },
    });
  });

  it('combines several entries for one uid', () => {
    const faults = parseFaultSpec('1:partial,1:rate=0.25,1:endpoints=ondemand+bucket,1:latency=50');
    expect(faults.get(1)).toEqual({
      partial: true,
      faultRate: 0.25,
      endpoints: ['OnDemandRequest', 'GetDataEntityBucket'],
      latencyMs: 50,
    });
  });

  it('accepts an empty spec', () => {
    expect(parseFaultSpec('').size).toBe(0);
  });

  it('refuses malformed entries', () => {
    for (const spec of [
      'hang',
      'x:hang',
      '1:explode',
      '1:rate=2',
      '1:latency=400-200',
      '1:latency=2147483648',
      '1:latency=10-3000000000',
      '1:latency=1e10',
      '1:endpoints=nope',
    ]) {
      expect(() => parseFaultSpec(spec)).toThrow(InvalidBehaviourError);
    }
  });
});

describe('parseFault', () => {
  it('reads every fault name', () => {
    expect(parseFault('malformed')).toEqual({ malformedJson: true });
    expect(parseFault('malformed-json')).toEqual({ malformedJson: true });
    expect(parseFault('oversize')).toEqual({ oversize: true });
    expect(parseFault('wrongSchema')).toEqual({ wrongSchema: true });
    expect(parseFault('wrong_schema')).toEqual({ wrongSchema: true });
    expect(parseFault('http500')).toEqual({ http500: true });
    expect(parseFault('overclaim')).toEqual({ overclaimSizes: 3 });
    expect(parseFault('overclaim=1.5')).toEqual({ overclaimSizes: 1.5 });
    expect(parseFault('wrongHour')).toEqual({ wrongHour: true });
    expect(parseFault('wrong-hour')).toEqual({ wrongHour: true });
    expect(parseFault('wrong_label')).toEqual({ wrongLabel: true });
    expect(parseFault('broken-text')).toEqual({ brokenText: true });
    expect(parseFault('honest')).toEqual({});
  });

  it('reads every endpoint, the bulk contents call included', () => {
    expect(parseFault('endpoints=ondemand+index+bucket+contents')).toEqual({
      endpoints: [
        'OnDemandRequest',
        'GetMinerIndex',
        'GetDataEntityBucket',
        'GetContentsByBuckets',
      ],
    });
    expect(parseFault('endpoints=GetContentsByBuckets')).toEqual({
      endpoints: ['GetContentsByBuckets'],
    });
  });

  it('reads the policies', () => {
    expect(parseFault('no-ondemand')).toEqual({ noOnDemand: true });
    expect(parseFault('no_ondemand')).toEqual({ noOnDemand: true });
    expect(parseFault('strict-budget')).toEqual({ strictBudget: true });
    expect(parseFault('no-strict-budget')).toEqual({ strictBudget: false });
    expect(parseFault('blacklist-all')).toEqual({ blacklistAll: true });
    expect(() => parseFault('blacklist-all=1')).toThrow(InvalidBehaviourError);
  });

  it('combines policies with faults for one uid', () => {
    expect(parseFaultSpec('3:no-ondemand,3:no-strict-budget,3:fabricate').get(3)).toEqual({
      noOnDemand: true,
      strictBudget: false,
      fabricate: true,
    });
  });
});

describe('validateBehaviour', () => {
  it('refuses out-of-range values', () => {
    expect(() => validateBehaviour({ latencyMs: -1 })).toThrow(InvalidBehaviourError);
    expect(() => validateBehaviour({ faultRate: 1.5 })).toThrow(InvalidBehaviourError);
    expect(() => validateBehaviour({ overclaimSizes: 0 })).toThrow(InvalidBehaviourError);
  });

  // Node fires a timer longer than 2^31 − 1 ms after 1 ms: the slow miner answered at once.
  it('refuses a latency longer than the longest timer Node keeps, fixed or as a range end', () => {
    expect(validateBehaviour({ latencyMs: 2_147_483_647 })).toEqual({ latencyMs: 2_147_483_647 });
    expect(validateBehaviour({ latencyMs: { min: 0, max: 2_147_483_647 } })).toEqual({
      latencyMs: { min: 0, max: 2_147_483_647 },
    });
    expect(() => validateBehaviour({ latencyMs: 2_147_483_648 })).toThrow(
      'latency must be between 0 and 2147483647 ms (about 24.8 days, the longest timer Node keeps; for a miner that never answers, use hang), got 2147483648',
    );
    expect(() => validateBehaviour({ latencyMs: { min: 10, max: 2_147_483_648 } })).toThrow(
      /latency range must end at most at 2147483647 ms .*, got 10-2147483648$/,
    );
    expect(() => validateBehaviour({ latencyMs: Infinity })).toThrow(InvalidBehaviourError);
  });
});

describe('describeBehaviour', () => {
  it('names the faults', () => {
    expect(describeBehaviour({})).toBe('honest');
    expect(
      describeBehaviour({ fabricate: true, latencyMs: { min: 1, max: 2 }, faultRate: 0.5 }),
    ).toBe('fabricate latency=1-2 rate=0.5');
  });

  it('names the policies, leaving out the default strict budget', () => {
    expect(describeBehaviour({ noOnDemand: true, strictBudget: false, blacklistAll: true })).toBe(
      'no-ondemand no-strict-budget blacklist-all',
    );
    expect(describeBehaviour({ strictBudget: true })).toBe('honest');
    expect(describeBehaviour({ partial: true, noOnDemand: true, latencyMs: 5 })).toBe(
      'partial no-ondemand latency=5',
    );
  });

  it('does not count latency or policies as faults', () => {
    expect(hasFaults({ latencyMs: 100 })).toBe(false);
    expect(hasFaults({ noOnDemand: true, strictBudget: false, blacklistAll: true })).toBe(false);
    expect(hasFaults({ overclaimSizes: 2 })).toBe(true);
  });
});

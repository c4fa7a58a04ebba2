import { defaultCallBudgets } from './miner-call-limits';
import { describeBudget, parseAllowedNetworks, parseCallBudgets } from './miner-network-settings';
import { HOUR_MS } from '../common/clock/durations';

describe(parseAllowedNetworks.name, () => {
  it('reads public as every public unicast address and nothing else', () => {
    expect(parseAllowedNetworks('public')).toEqual({ publicUnicast: true, cidrs: [] });
  });

  it('reads loopback as the IPv4 and IPv6 loopback ranges', () => {
    expect(parseAllowedNetworks('loopback')).toEqual({
      publicUnicast: false,
      cidrs: ['127.0.0.0/8', '::1/128'],
    });
  });

  it('reads the keywords in any case and ignores blanks around entries', () => {
    expect(parseAllowedNetworks(' PUBLIC ,, Loopback , ')).toEqual({
      publicUnicast: true,
      cidrs: ['127.0.0.0/8', '::1/128'],
    });
  });

  it('normalizes CIDR ranges and makes a bare address a single-address range', () => {
    expect(
      parseAllowedNetworks('10.0.0.0/8, 2001:DB8:0:0::/32, 203.0.113.7, FD00::1, ::ffff:10.0.0.1'),
    ).toEqual({
      publicUnicast: false,
      cidrs: ['10.0.0.0/8', '2001:db8::/32', '203.0.113.7/32', 'fd00::1/128', '::ffff:a00:1/128'],
    });
  });

  it('combines public with further ranges', () => {
    expect(parseAllowedNetworks('public,192.168.0.0/16')).toEqual({
      publicUnicast: true,
      cidrs: ['192.168.0.0/16'],
    });
  });

  it.each(['', ' ', ' , ,'])('refuses %p, which lists no network', (text) => {
    expect(() => parseAllowedNetworks(text)).toThrow('must list at least one network');
  });

  it.each([
    'intranet',
    '10.0.0.0/33',
    '2001:db8::/129',
    '256.1.1.1',
    '10.0.0.0/8/8',
    'publics',
    // Short and numeric IPv4 forms read as other networks than they seem: 10/8 is 0.0.0.10/8.
    '10/8',
    '10.1/16',
    '0x0a000000/8',
    '10.0.0.0/08x',
  ])('refuses %p, naming the entry and the forms it may take', (entry) => {
    expect(() => parseAllowedNetworks(`public, ${entry}`)).toThrow(
      `"${entry}" is not a CIDR range (e.g. 203.0.113.0/24), "public" or "loopback"`,
    );
  });

  // An operator's audit: `10.0.0.0/33,foo` named only the first, so a fix led to a second error.
  it('names every entry it refuses in its one message, in the order given', () => {
    expect(() => parseAllowedNetworks('10.0.0.0/33, public, foo, 10.0.0.0/8, ::1/200')).toThrow(
      new Error(
        '"10.0.0.0/33", "foo" and "::1/200" are not CIDR ranges (e.g. 203.0.113.0/24), "public" or "loopback"',
      ),
    );
  });
});

describe(parseCallBudgets.name, () => {
  const SHARED = defaultCallBudgets(true);

  it('reads calls per hour for each synapse', () => {
    expect(parseCallBudgets('GetMinerIndex=2/h,GetDataEntityBucket=1/h')).toEqual({
      GetMinerIndex: { calls: 2, windowMs: HOUR_MS },
      GetDataEntityBucket: { calls: 1, windowMs: HOUR_MS },
    });
  });

  it('reads windows of several hours, minutes or seconds', () => {
    expect(
      parseCallBudgets('GetMinerIndex=3/2h, GetDataEntityBucket=5/30m, OnDemandRequest=10/90s'),
    ).toEqual({
      GetMinerIndex: { calls: 3, windowMs: 2 * HOUR_MS },
      GetDataEntityBucket: { calls: 5, windowMs: 30 * 60_000 },
      OnDemandRequest: { calls: 10, windowMs: 90_000 },
    });
  });

  it('allows spaces around the parts of an entry', () => {
    expect(parseCallBudgets(' GetMinerIndex = 2 / 1 h ')).toEqual({
      GetMinerIndex: { calls: 2, windowMs: HOUR_MS },
    });
  });

  it('reads a budget of zero calls: the synapse is never called', () => {
    expect(parseCallBudgets('OnDemandRequest=0/h')).toEqual({
      OnDemandRequest: { calls: 0, windowMs: HOUR_MS },
    });
  });

  it('keeps the defaults when nothing is listed', () => {
    expect(parseCallBudgets('', SHARED)).toEqual(SHARED);
    expect(parseCallBudgets(' , ', SHARED)).toEqual(SHARED);
  });

  it('changes only the synapses it names, over the defaults', () => {
    expect(parseCallBudgets('GetContentsByBuckets=5/h, OnDemandRequest=30/10m', SHARED)).toEqual({
      GetMinerIndex: { calls: 1, windowMs: HOUR_MS },
      GetDataEntityBucket: { calls: 1, windowMs: HOUR_MS },
      GetContentsByBuckets: { calls: 5, windowMs: HOUR_MS },
      OnDemandRequest: { calls: 30, windowMs: 600_000 },
    });
  });

  it('removes one budget with <Synapse>=none, and every budget so far with none', () => {
    expect(parseCallBudgets('GetContentsByBuckets=none', SHARED)).toEqual({
      GetMinerIndex: { calls: 1, windowMs: HOUR_MS },
      GetDataEntityBucket: { calls: 1, windowMs: HOUR_MS },
      OnDemandRequest: { calls: 8, windowMs: HOUR_MS },
    });
    expect(parseCallBudgets('None', SHARED)).toEqual({});
    expect(parseCallBudgets('none, GetMinerIndex=1/h', SHARED)).toEqual({
      GetMinerIndex: { calls: 1, windowMs: HOUR_MS },
    });
  });

  // A configuration audit's: the first alone was named, the next left for another start.
  it('names every entry it refuses at once', () => {
    expect(() => parseCallBudgets('Foo=1/h, GetMinerIndex=abc, GetMinerIndex=1/0h')).toThrow(
      new Error(
        '"Foo" is not a synapse (GetMinerIndex, GetDataEntityBucket, GetContentsByBuckets, ' +
          'OnDemandRequest); "GetMinerIndex=abc" must look like <Synapse>=<calls>/h (or /30m, ' +
          '/90s), or <Synapse>=none; "GetMinerIndex=1/0h": the window must be longer than 0',
      ),
    );
  });

  it('does not change the defaults it was given', () => {
    const defaults = defaultCallBudgets(false);
    parseCallBudgets('none,GetMinerIndex=5/h', defaults);
    expect(defaults).toEqual(defaultCallBudgets(false));
  });

  it.each([
    'GetMinerIndex',
    'GetMinerIndex=2',
    'GetMinerIndex=2/d',
    'GetMinerIndex=-1/h',
    'GetMinerIndex=two/h',
    'GetMinerIndex=2/1.5h',
    '=2/h',
  ])('refuses %p, showing the expected form', (entry) => {
    expect(() => parseCallBudgets(`GetDataEntityBucket=2/h,${entry}`)).toThrow(
      `"${entry}" must look like <Synapse>=<calls>/h (or /30m, /90s), or <Synapse>=none`,
    );
  });

  it.each(['getminerindex=2/h', 'getminerindex=none'])(
    'refuses an unknown synapse in %p, listing the known ones',
    (entry) => {
      expect(() => parseCallBudgets(entry)).toThrow(
        '"getminerindex" is not a synapse (GetMinerIndex, GetDataEntityBucket, GetContentsByBuckets, OnDemandRequest)',
      );
    },
  );

  // A budget audit's: the last of two entries won without a word, a higher budget over a lower.
  it.each([
    'GetContentsByBuckets=2/h, GetContentsByBuckets=9/h',
    'GetContentsByBuckets=2/h,GetContentsByBuckets=none',
  ])('refuses a synapse named twice in %p', (text) => {
    expect(() => parseCallBudgets(text)).toThrow(
      'GetContentsByBuckets is named twice: give each synapse once',
    );
  });

  it('refuses a window of zero length', () => {
    expect(() => parseCallBudgets('GetMinerIndex=2/0m')).toThrow(
      '"GetMinerIndex=2/0m": the window must be longer than 0',
    );
  });
});

describe(defaultCallBudgets.name, () => {
  it('leaves a validator on the same hotkey its index and bucket call of each hour', () => {
    expect(defaultCallBudgets(true)).toEqual({
      GetMinerIndex: { calls: 1, windowMs: HOUR_MS },
      GetDataEntityBucket: { calls: 1, windowMs: HOUR_MS },
      GetContentsByBuckets: { calls: 8, windowMs: HOUR_MS },
      OnDemandRequest: { calls: 8, windowMs: HOUR_MS },
    });
  });

  it("takes the miners' whole limits on a hotkey of its own", () => {
    expect(defaultCallBudgets(false)).toEqual({
      GetMinerIndex: { calls: 2, windowMs: HOUR_MS },
      GetDataEntityBucket: { calls: 2, windowMs: HOUR_MS },
      GetContentsByBuckets: { calls: 10, windowMs: HOUR_MS },
      OnDemandRequest: { calls: 10, windowMs: HOUR_MS },
    });
  });
});

describe(describeBudget.name, () => {
  it.each([
    [{ calls: 1, windowMs: HOUR_MS }, '1/h'],
    [{ calls: 3, windowMs: 2 * HOUR_MS }, '3/2h'],
    [{ calls: 5, windowMs: 30 * 60_000 }, '5/30m'],
    [{ calls: 10, windowMs: 90_000 }, '10/90s'],
  ])('writes %p as %p', (budget, text) => {
    expect(describeBudget(budget)).toBe(text);
  });
});

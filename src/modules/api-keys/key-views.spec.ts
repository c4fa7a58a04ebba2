import { toUsage } from './key-views';

describe(toUsage.name, () => {
  it('reads a running window as the next request would be counted', () => {
    expect(toUsage(10, { hits: 4, windowEndsInSeconds: 30, blockedForSeconds: 0 }, 60)).toEqual({
      limit: 10,
      window_seconds: 60,
      used: 4,
      remaining: 6,
      resets_in_seconds: 30,
      rate_limited: false,
    });
  });

  it('reads a cool-down as 429s until its end, with nothing remaining', () => {
    expect(toUsage(10, { hits: 10, windowEndsInSeconds: 50, blockedForSeconds: 50 }, 60)).toEqual({
      limit: 10,
      window_seconds: 60,
      used: 10,
      remaining: 0,
      resets_in_seconds: 50,
      rate_limited: true,
    });
  });

  it('reads a cool-down under a limit since raised above the count as over: the next request ends it', () => {
    const usage = toUsage(20, { hits: 10, windowEndsInSeconds: 50, blockedForSeconds: 50 }, 60);
    expect(usage).toMatchObject({ remaining: 10, resets_in_seconds: 50, rate_limited: false });
  });

  it('reads a limit lowered under the count as nothing remaining, not a negative number', () => {
    const usage = toUsage(5, { hits: 8, windowEndsInSeconds: 50, blockedForSeconds: 0 }, 60);
    expect(usage).toMatchObject({ used: 8, remaining: 0, rate_limited: false });
  });
});

import type { Response } from 'express';
import type { RateLimitRecord } from './rate-limit-storage';
import { rateLimitState, setRateLimitHeaders } from './rate-limit-headers';

/** The headers `setRateLimitHeaders` writes for a hit under `limit` with this record. */
function headersFor(limit: number, record: RateLimitRecord, windowSeconds = 3600) {
  const headers: Record<string, unknown> = {};
  const response = { setHeader: (name: string, value: unknown) => (headers[name] = value) };
  setRateLimitHeaders(
    response as unknown as Response,
    rateLimitState(limit, record, windowSeconds),
  );
  return headers;
}

describe(setRateLimitHeaders.name, () => {
  it("says the seconds left in the window, not the window's length, in both forms", () => {
    // Half-way through an hour's window: a client scheduling by these waits 30 min, not 60.
    expect(
      headersFor(100, { totalHits: 1, timeToExpire: 1800, isBlocked: false, timeToBlockExpire: 0 }),
    ).toEqual({
      'X-RateLimit-Limit': 100,
      'X-RateLimit-Remaining': 99,
      'X-RateLimit-Reset': 1800,
      'RateLimit-Policy': '"default";q=100;w=3600',
      RateLimit: '"default";r=99;t=1800',
    });
  });

  it("over the budget: nothing remains until the cool-down's end", () => {
    expect(
      headersFor(100, {
        totalHits: 100,
        timeToExpire: 2400,
        isBlocked: true,
        timeToBlockExpire: 2400,
      }),
    ).toMatchObject({
      'X-RateLimit-Remaining': 0,
      'X-RateLimit-Reset': 2400,
      RateLimit: '"default";r=0;t=2400',
    });
  });

  it('a cool-down in its last second still resets in 1, never 0', () => {
    expect(
      headersFor(5, { totalHits: 5, timeToExpire: 0, isBlocked: true, timeToBlockExpire: 0 }),
    ).toMatchObject({ 'X-RateLimit-Reset': 1, RateLimit: '"default";r=0;t=1' });
  });

  it('a limit lowered below the count leaves none, not a negative number', () => {
    expect(
      headersFor(10, { totalHits: 40, timeToExpire: 600, isBlocked: false, timeToBlockExpire: 0 }),
    ).toMatchObject({ 'X-RateLimit-Remaining': 0, RateLimit: '"default";r=0;t=600' });
  });
});

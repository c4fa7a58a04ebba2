import { retryDelay } from './retry-delay';

describe(retryDelay.name, () => {
  it('doubles the first wait per failure, up to the longest', () => {
    expect([0, 1, 2, 3, 10, 1000].map((attempts) => retryDelay(attempts, 12_000, 60_000))).toEqual([
      12_000, 24_000, 48_000, 60_000, 60_000, 60_000,
    ]);
    // The publication's defaults (12 s, at most an hour): from nine failures in a row on, the wait
    // is the hour.
    expect([8, 9, 1e6].map((attempts) => retryDelay(attempts, 12_000, 3_600_000))).toEqual([
      3_072_000, 3_600_000, 3_600_000,
    ]);
  });
});

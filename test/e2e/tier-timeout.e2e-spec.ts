import { timeoutInEffect } from '../support/timeout-in-effect';

describe('The e2e tier', () => {
  it('gives a test 60 s', () => {
    expect(timeoutInEffect()).toBe(60_000);
  });
});

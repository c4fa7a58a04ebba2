import { timeoutInEffect } from './timeout-in-effect';

describe('The unit tier', () => {
  it('gives a test the run’s 30 s', () => {
    expect(timeoutInEffect()).toBe(30_000);
  });
});

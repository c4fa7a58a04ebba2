import { LATE, orLate, within } from './within';

describe(within.name, () => {
  it("gives the work's value when it comes in time", async () => {
    await expect(within(Promise.resolve(7), 1000, () => new Error('late'))).resolves.toBe(7);
  });

  it("passes the work's own failure on", async () => {
    await expect(
      within(Promise.reject(new Error('own')), 1000, () => new Error('late')),
    ).rejects.toThrow('own');
  });

  it('refuses with the given error once the time has passed, without waiting for the work', async () => {
    // Work that never settles, rather than a long timer: a timer still running when the file
    // ends keeps jest's worker alive, and jest kills it ("failed to exit gracefully").
    const never = new Promise<never>(() => undefined);
    const started = performance.now();
    await expect(within(never, 50, () => new Error('no answer'))).rejects.toThrow('no answer');
    expect(performance.now() - started).toBeLessThan(1_000);
  });
});

describe(orLate.name, () => {
  it("gives the work's value when it comes in time", async () => {
    await expect(orLate(Promise.resolve(7), 1000)).resolves.toBe(7);
  });

  it("passes the work's own failure on", async () => {
    await expect(orLate(Promise.reject(new Error('own')), 1000)).rejects.toThrow('own');
  });

  it('gives LATE once the time has passed, without waiting for the work', async () => {
    const never = new Promise<never>(() => undefined);
    const started = performance.now();
    await expect(orLate(never, 50)).resolves.toBe(LATE);
    expect(performance.now() - started).toBeLessThan(1_000);
  });
});

describe(`${orLate.name}'s timer`, () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('is cleared however the wait ends: the value, the failure or the time', async () => {
    await orLate(Promise.resolve(7), 1000);
    expect(jest.getTimerCount()).toBe(0);
    await orLate(Promise.reject(new Error('own')), 1000).catch(() => undefined);
    expect(jest.getTimerCount()).toBe(0);
    const late = orLate(new Promise<never>(() => undefined), 1000);
    await jest.advanceTimersByTimeAsync(1000);
    await expect(late).resolves.toBe(LATE);
    expect(jest.getTimerCount()).toBe(0);
  });

  it('gives the value of work already done, even with no time left', async () => {
    await expect(orLate(Promise.resolve(7), 0)).resolves.toBe(7);
  });
});

describe(`${orLate.name} after the time`, () => {
  it("leaves the work's later failure handled: no unhandled rejection", async () => {
    const unhandled: unknown[] = [];
    const listener = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', listener);
    try {
      let fail: (error: Error) => void = () => undefined;
      const work = new Promise<never>((_, reject) => (fail = reject));
      await expect(orLate(work, 10)).resolves.toBe(LATE);
      fail(new Error('after the deadline'));
      // Node reports an unhandled rejection once the microtasks after it have run.
      await new Promise((resolve) => setImmediate(resolve));
      await new Promise((resolve) => setImmediate(resolve));
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', listener);
    }
  });
});

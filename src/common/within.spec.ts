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

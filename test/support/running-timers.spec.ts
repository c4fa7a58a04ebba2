import { runningTimers, timersLeftAfter } from './running-timers';

describe('timersLeftAfter (the test environment, after each spec file)', () => {
  let timers: NodeJS.Timeout[] = [];
  afterEach(() => {
    timers.forEach(clearTimeout);
    timers = [];
  });

  it('waits for a short timer to end', async () => {
    const before = runningTimers();
    timers.push(setTimeout(() => undefined, 200));
    const started = performance.now();

    expect(await timersLeftAfter(before, 2_000)).toBe(0);
    expect(performance.now() - started).toBeGreaterThanOrEqual(150);
  });

  it('answers how many are still running once the time is up', async () => {
    const before = runningTimers();
    timers.push(
      setTimeout(() => undefined, 10_000),
      setInterval(() => undefined, 1_000),
    );

    expect(await timersLeftAfter(before, 100)).toBe(2);
  });

  it('does not count a timer that does not hold the process open', async () => {
    const before = runningTimers();
    timers.push(setTimeout(() => undefined, 10_000).unref());

    expect(await timersLeftAfter(before, 100)).toBe(0);
  });
});

import type { LoggerService } from '@nestjs/common';
import { ThrottledWarning } from './throttled-warning';

describe(ThrottledWarning.name, () => {
  let lines: unknown[][];
  let now: number;
  let warnings: ThrottledWarning;

  beforeEach(() => {
    jest.useFakeTimers();
    lines = [];
    now = 5_000;
    const logger = { warn: (...line: unknown[]) => lines.push(line) } as unknown as LoggerService;
    warnings = new ThrottledWarning(
      logger,
      {
        line: (subject) => `refused ${subject}`,
        summary: (count, seconds, last) => `${count} more in ${seconds} s, the last ${last}`,
      },
      10_000,
      () => now,
    );
  });
  afterEach(() => jest.useRealTimers());

  /** `count` warnings `stepMs` apart, the clock and timers moved along. */
  function warn(count: number, stepMs: number, from = 0): void {
    for (let i = from; i < from + count; i++) {
      warnings.warn(`#${i}`);
      now += stepMs;
      jest.advanceTimersByTime(stepMs);
    }
  }

  it('says a flood once at first, then once per interval with the count held back', () => {
    warn(250, 100); // 25 s of one warning each 100 ms
    expect(lines).toEqual([
      ['refused #0'],
      [{ count: 99 }, '99 more in 10 s, the last #99'],
      [{ count: 100 }, '100 more in 10 s, the last #199'],
    ]);
    jest.advanceTimersByTime(10_000);
    expect(lines[3]).toEqual([{ count: 50 }, '50 more in 10 s, the last #249']);
  });

  it('writes nothing more for a warning alone, and the next after a quiet interval at once', () => {
    warn(1, 0);
    jest.advanceTimersByTime(60_000);
    now += 60_000;
    warn(1, 0, 1);
    expect(lines).toEqual([['refused #0'], ['refused #1']]);
  });
});

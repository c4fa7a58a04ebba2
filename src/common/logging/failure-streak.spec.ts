import { FailureStreak } from './failure-streak';

describe(FailureStreak.name, () => {
  it('finds the first failure in a row worth its line, and another cause, and counts them all', () => {
    const streak = new FailureStreak();
    expect(
      ['refused', 'refused', 'denied', 'denied', 'refused'].map((cause) => streak.failed(cause)),
    ).toEqual([true, false, true, false, true]);
    expect(streak.ended()).toBe(5);
    expect(streak.ended()).toBe(0);
    expect(streak.failed('refused')).toBe(true);
  });
});

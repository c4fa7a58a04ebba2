import { dueAt, dueCount } from './soak-traffic';

describe('the soak schedule', () => {
  // bench:soak's loop: every 5 ms tick sends what dueCount says is due, each timed from dueAt.
  // A request answered at once must then show no more than a tick's lateness: timed from an
  // instant before it was due, every sample carried a whole interval (25 ms at 40/s) no client
  // waited (a review's finding).
  it.each([40, 20, 7])('never times a request from before it fell due (%p a second)', (rate) => {
    const lateness: number[] = [];
    let sent = 0;
    for (let elapsed = 0; elapsed <= 10_000; elapsed += 5) {
      for (const due = dueCount(elapsed, rate); sent < due; sent++) {
        lateness.push(elapsed - dueAt(sent, rate));
      }
    }
    expect(sent).toBe(10 * rate);
    expect(Math.min(...lateness)).toBeGreaterThanOrEqual(0);
    expect(Math.max(...lateness)).toBeLessThan(5);
  });
});

import { LatencyTracker } from './latency-tracker';

function trackerWith(samples: readonly number[], capacity = 200, minimumSamples = 10) {
  const tracker = new LatencyTracker(capacity, minimumSamples);
  for (const sample of samples) tracker.record(sample);
  return tracker;
}

describe(LatencyTracker.name, () => {
  it('answers the fallback until it has the minimum number of samples', () => {
    const tracker = trackerWith([120, 80, 95, 300, 110, 90, 100, 105, 130]);

    expect(tracker.quantile(0.9, 2_500)).toBe(2_500);
    tracker.record(140);
    expect(tracker.quantile(0.9, 2_500)).not.toBe(2_500);
  });

  it('answers the fallback with no samples at all', () => {
    expect(new LatencyTracker().quantile(0.5, 750)).toBe(750);
  });

  it('answers the quantile of the recorded samples whatever order they came in', () => {
    const tracker = trackerWith([70, 10, 100, 40, 20, 90, 50, 30, 80, 60]);

    expect(tracker.quantile(0, 0)).toBe(10);
    expect(tracker.quantile(0.5, 0)).toBe(60);
    expect(tracker.quantile(0.9, 0)).toBe(100);
    expect(tracker.quantile(1, 0)).toBe(100);
  });

  it('rounds the rank down between samples, so the hedge waits no longer than the samples say', () => {
    // 0.9 of 15 samples is rank 13.5: the 14th smallest (index 13), not the 15th.
    const tracker = trackerWith(Array.from({ length: 15 }, (_, index) => (index + 1) * 10));

    expect(tracker.quantile(0.9, 0)).toBe(140);
  });

  it('honours the configured minimum number of samples', () => {
    const tracker = trackerWith([42, 43], 10, 2);

    expect(tracker.quantile(0, -1)).toBe(42);
  });

  it('forgets the oldest samples once the ring is full', () => {
    const tracker = trackerWith([5_000, 5_000, 5_000, 5_000], 4, 1);
    expect(tracker.quantile(0, 0)).toBe(5_000);

    for (const sample of [10, 20, 30]) tracker.record(sample);
    expect(tracker.quantile(0, 0)).toBe(10);
    expect(tracker.quantile(1, 0)).toBe(5_000);

    tracker.record(40);
    expect(tracker.quantile(1, 0)).toBe(40);
  });

  it('overwrites samples in the order they were recorded, round after round', () => {
    const tracker = trackerWith([1, 2, 3], 3, 1);

    tracker.record(4);
    expect(tracker.quantile(0, 0)).toBe(2);
    tracker.record(5);
    tracker.record(6);
    tracker.record(7);
    expect(tracker.quantile(0, 0)).toBe(5);
    expect(tracker.quantile(1, 0)).toBe(7);
  });
});

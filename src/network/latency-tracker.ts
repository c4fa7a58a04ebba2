/**
 * Recent successful call latencies across the network, for the hedging delay. A fixed ring of
 * the last `capacity` samples: cheap to update on every call, quick to sort when asked.
 */
export class LatencyTracker {
  private readonly samples: number[] = [];
  private next = 0;

  constructor(
    private readonly capacity = 200,
    private readonly minimumSamples = 10,
  ) {}

  record(latencyMs: number): void {
    if (this.samples.length < this.capacity) this.samples.push(latencyMs);
    else this.samples[this.next] = latencyMs;
    this.next = (this.next + 1) % this.capacity;
  }

  /** The q-quantile (0..1) of recent samples, or `fallback` until there are enough of them. */
  quantile(q: number, fallback: number): number {
    if (this.samples.length < this.minimumSamples) return fallback;
    const sorted = [...this.samples].sort((a, b) => a - b);
    return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
  }
}

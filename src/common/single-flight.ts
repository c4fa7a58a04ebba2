/**
 * One run of a piece of work per key at a time: a caller asking for a key whose work is under
 * way joins it and gets its outcome, value or error, instead of starting it again. The key is
 * let go once the work settles, so nothing is kept: a rejection is shared with every caller that
 * joined it, never with one that comes after (caching, where wanted, is the work's own).
 */
export class SingleFlight<K, V> {
  private readonly flights = new Map<K, Promise<V>>();

  /** Whether a run of the key is under way: a `run` of it now would join it. */
  has(key: K): boolean {
    return this.flights.has(key);
  }

  /**
   * The run under way for the key, or a new one of `work`, started at once: the key is under way
   * when this returns, so a caller may claim several keys before its first await.
   */
  run(key: K, work: () => Promise<V>): Promise<V> {
    const running = this.flights.get(key);
    if (running) return running;
    const flight = work().finally(() => {
      if (this.flights.get(key) === flight) this.flights.delete(key);
    });
    this.flights.set(key, flight);
    return flight;
  }
}

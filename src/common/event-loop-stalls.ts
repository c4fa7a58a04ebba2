/** How often the event loop is sampled. */
const TICK_MS = 100;

/**
 * Notices this process' own stalls: a timer due every TICK_MS that runs `stallMs` late means the
 * event loop read no socket and ran no other callback for that long (a flood of requests, a
 * large JSON parse). A reply that waited unread meanwhile is no sign of a slow server. The timer
 * is unref'd: it keeps no process alive. Costs ten timer turns a second.
 */
export class EventLoopStalls {
  private lastTick = performance.now();
  private lastStall = Number.NEGATIVE_INFINITY;
  private readonly timer = setInterval(() => this.tick(), TICK_MS).unref();

  constructor(private readonly stallMs: number) {}

  /**
   * Whether the loop stalled for `stallMs` or more within the last `withinMs`, or is only now
   * coming out of one (a callback due at the stall's end may run before this timer's).
   */
  stalledWithin(withinMs: number): boolean {
    const now = performance.now();
    return now - this.lastTick >= TICK_MS + this.stallMs || now - this.lastStall <= withinMs;
  }

  stop(): void {
    clearInterval(this.timer);
  }

  private tick(): void {
    const now = performance.now();
    if (now - this.lastTick >= TICK_MS + this.stallMs) this.lastStall = now;
    this.lastTick = now;
  }
}

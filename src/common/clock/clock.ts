import { Global, Module } from '@nestjs/common';
import { ClockSimulation, simulatedTime } from './clock-simulation';

/**
 * The time the service believes it is. Everything with a lifetime (scraping tasks, call
 * budgets, cooldowns, stored-data freshness) asks this instead of `new Date()`, so tests can
 * move a task through seven days without waiting: in one process with `advance`, across
 * processes with CLOCK_SIMULATION (clock-simulation.ts). Timers (deadlines, timeouts, job
 * intervals) stay in real time. Provided by ClockModule, built from CLOCK_SETTINGS.
 */
export class Clock {
  private offsetMs = 0;

  constructor(private readonly simulation?: ClockSimulation) {}

  now(): Date {
    return new Date(this.timeAt(Date.now()));
  }

  /**
   * How far this clock runs ahead of the machine's: 0 in production (CLOCK_SIMULATION is
   * refused there, and `advance` is for tests). A time read from another clock (Postgres's
   * `clock_timestamp()`) is moved by it to this clock's time, so that simulated time reaches
   * what is timed there too.
   */
  shiftMs(): number {
    const real = Date.now();
    return this.timeAt(real) - real;
  }

  private timeAt(real: number): number {
    return (this.simulation ? simulatedTime(this.simulation, real) : real) + this.offsetMs;
  }

  /** Moves this process's clock forward (tests only). */
  advance(ms: number): void {
    this.offsetMs += ms;
  }
}

/** What the clock is built from; provided by ConfigModule (CLOCK_SIMULATION). */
export interface ClockSettings {
  simulation?: ClockSimulation;
}
export const CLOCK_SETTINGS = Symbol('CLOCK_SETTINGS');

@Global()
@Module({
  providers: [
    {
      provide: Clock,
      useFactory: (settings: ClockSettings) => new Clock(settings.simulation),
      inject: [CLOCK_SETTINGS],
    },
  ],
  exports: [Clock],
})
export class ClockModule {}

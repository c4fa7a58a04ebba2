import { Global, Injectable, Module } from '@nestjs/common';

/**
 * The time the service believes it is. Everything with a lifetime (scraping tasks) asks this
 * instead of `new Date()`, so tests can move a task through seven days without waiting.
 */
@Injectable()
export class Clock {
  private offsetMs = 0;

  now(): Date {
    return new Date(Date.now() + this.offsetMs);
  }

  /** Moves this process's clock forward (tests only). */
  advance(ms: number): void {
    this.offsetMs += ms;
  }
}

@Global()
@Module({ providers: [Clock], exports: [Clock] })
export class ClockModule {}

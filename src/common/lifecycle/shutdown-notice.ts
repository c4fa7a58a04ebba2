import { Global, Module } from '@nestjs/common';

/**
 * Whether the process's shutdown has begun: set at the first signal, before the in-flight
 * requests drain (graceful-shutdown.ts). The app's shutdown hooks, which stop the background
 * jobs, run only after the drain; work that would start new calls to miners meanwhile (the
 * index sync's next miner) reads this to start none. A flake found it: the sync went on through
 * the drain and finished its 64 miners before it heard of the shutdown.
 */
export class ShutdownNotice {
  private begun = false;

  begin(): void {
    this.begun = true;
  }

  hasBegun(): boolean {
    return this.begun;
  }
}

/** Global: the signal handler (gateway.ts) sets it, the index sync reads it. */
@Global()
@Module({ providers: [ShutdownNotice], exports: [ShutdownNotice] })
export class ShutdownNoticeModule {}

import type { Server } from 'node:http';
import { performance } from 'node:perf_hooks';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { LoggerService } from '@nestjs/common';

/** V8's `gc`, as `--expose-gc` gives it. */
export type CollectGarbage = (options?: {
  type: 'major';
  execution: 'sync';
  flavor: 'last-resort';
}) => void;

/**
 * The call that frees all garbage and gives the pages back, measured on each V8: from 12 (Node
 * 22, 24) only the last-resort flavour does (a bare `gc()` leaves most garbage in place); V8 11
 * (Node 20) collects fully on a bare `gc()` and leaves the garbage when given options.
 */
const THOROUGH =
  Number(process.versions.v8.split('.')[0]) >= 12
    ? ({ type: 'major', execution: 'sync', flavor: 'last-resort' } as const)
    : undefined;

/** What the trim reads and does; `systemSources()` is the process's own. */
export interface IdleMemorySources {
  /** Requests the server has received since it started. */
  requests(): number;
  /** The event loop's utilisation (0–1) since the previous call. */
  utilization(): number;
  /** Resident set size, in bytes. */
  rss(): number;
  collect(): void;
}

export interface IdleMemorySettings {
  /** How often the process looks at itself. */
  intervalMs: number;
  /**
   * Requests at this rate or under still count as idle: health probes and a metrics scrape,
   * which come every few seconds whatever the traffic (16 a minute: 4 in 15 s).
   */
  idleRequestsPerMinute: number;
  /** Nor is an interval idle at or above this event-loop utilisation (background work). */
  idleUtilization: number;
  /** RSS growth over what the last collection left that makes another worth its pause. */
  growthBytes: number;
}

/** The settings of the gateway's trim but its interval (IDLE_MEMORY_CHECK_SECONDS). */
const IDLE_MEMORY_SETTINGS: Omit<IdleMemorySettings, 'intervalMs'> = {
  idleRequestsPerMinute: 16,
  idleUtilization: 0.02,
  growthBytes: 16 * 1024 * 1024,
};

export interface Collection {
  rssBefore: number;
  rssAfter: number;
  pauseMs: number;
}

/**
 * Gives memory back to the system once the process is idle. Node 24's V8 never runs its own
 * memory reducer in an idle process (it keeps judging the allocation rate high), so a gateway
 * that started, or served a burst, holds its peak young generation for good: 216 MB idle where
 * Node 20 and 22 fall to 119 and 134 (docs/decisions.md, "Idle memory on Node 24"). One
 * thorough collection per idle spell does what the reducer would.
 */
export class IdleMemoryTrim {
  /** RSS after the last collection: none yet, so the first idle spell collects. */
  private floor = 0;
  private requestsSeen = 0;
  private timer?: NodeJS.Timeout;

  constructor(
    private readonly sources: IdleMemorySources,
    private readonly settings: IdleMemorySettings,
  ) {}

  /**
   * Collects if the last interval was idle and RSS grew since the last collection. Idle means
   * next to no requests, not a low load: a collection pauses the process (~100 ms in the
   * gateway), which a request arriving in that time waits out, so a lightly used gateway is left
   * alone. Background work (an index sync) is kept out by the event loop's utilisation.
   */
  check(): Collection | undefined {
    const requests = this.sources.requests();
    const served = requests - this.requestsSeen;
    this.requestsSeen = requests;
    const busy =
      served > (this.settings.idleRequestsPerMinute * this.settings.intervalMs) / 60_000 ||
      this.sources.utilization() >= this.settings.idleUtilization;
    const rssBefore = this.sources.rss();
    if (busy || rssBefore < this.floor + this.settings.growthBytes) return undefined;
    const started = performance.now();
    this.sources.collect();
    const pauseMs = performance.now() - started;
    // Memory a collection cannot free (live data) is not chased again until RSS grows past it.
    this.floor = this.sources.rss();
    return { rssBefore, rssAfter: this.floor, pauseMs };
  }

  /** Checks every interval, logging each collection; the timer does not keep the process up. */
  start(logger: LoggerService): void {
    this.timer = setInterval(() => {
      const collection = this.check();
      if (collection) logger.log(collectionLine(collection), 'IdleMemory');
    }, this.settings.intervalMs).unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }
}

/**
 * Starts giving this process's memory back every `intervalMs` (IDLE_MEMORY_CHECK_SECONDS),
 * counting `server`'s requests; nothing when `intervalMs` is 0 (turned off).
 */
export function startIdleMemoryTrim(
  server: Server,
  logger: LoggerService,
  intervalMs: number,
): IdleMemoryTrim | undefined {
  if (intervalMs === 0) return undefined;
  const trim = new IdleMemoryTrim(systemSources(server), { ...IDLE_MEMORY_SETTINGS, intervalMs });
  trim.start(logger);
  return trim;
}

function collectionLine({ rssBefore, rssAfter, pauseMs }: Collection): string {
  const mb = (bytes: number) => Math.round(bytes / 1_048_576);
  return `idle: collected garbage, RSS ${mb(rssBefore)} → ${mb(rssAfter)} MB (${Math.round(pauseMs)} ms)`;
}

/** This process: `server`'s requests, event-loop utilisation, RSS, and V8's `gc`. */
export function systemSources(server: Server): IdleMemorySources {
  let requests = 0;
  server.on('request', () => void (requests += 1));
  let last = performance.eventLoopUtilization();
  let collect: CollectGarbage | undefined;
  return {
    requests: () => requests,
    utilization() {
      const now = performance.eventLoopUtilization();
      const since = performance.eventLoopUtilization(now, last);
      last = now;
      return since.utilization;
    },
    rss: () => process.memoryUsage.rss(),
    collect() {
      collect ??= exposedGc();
      collect(THOROUGH);
    },
  };
}

/**
 * V8's `gc` without starting node with `--expose-gc`: the flag applies to contexts created after
 * it is set, so a new context hands the function over, and the flag is put back at once, so no
 * other context gets it (jest's leak detector takes it the same way).
 */
export function exposedGc(): CollectGarbage {
  const global = (globalThis as { gc?: CollectGarbage }).gc;
  if (global) return global;
  setFlagsFromString('--expose-gc');
  try {
    return runInNewContext('gc') as CollectGarbage;
  } finally {
    setFlagsFromString('--no-expose-gc');
  }
}

import { Global, Logger, LoggerService, Module, OnModuleDestroy } from '@nestjs/common';
import { storage } from 'nestjs-pino/storage';

/** At most one "database unavailable" line per this many ms while an outage lasts. */
export const OUTAGE_LOG_INTERVAL_MS = 10_000;
/**
 * The database counts as back only if no request met it unavailable for this long: a pool that
 * is full (its waits 503 too) while the probe's own connection answers is not a recovery, and
 * would otherwise log "reachable again" and a new first warning at every health check.
 */
export const OUTAGE_QUIET_MS = 1000;
/**
 * How often, while an outage lasts, the log asks the database itself (probeWith): the recovery
 * is said within this (and OUTAGE_QUIET_MS) of the database's return, whether or not anything
 * runs health's probe meanwhile.
 */
export const OUTAGE_PROBE_MS = 5000;

/**
 * The log of a Postgres outage as requests meet it: the first 503 for an unreachable database
 * is logged at once, then at most one line per OUTAGE_LOG_INTERVAL_MS with the count answered
 * since the last line, and one info line once health's own `SELECT 1` answers again (the probe
 * `gateway_database_up` reads). One warning per request flooded the log during an outage, at
 * hundreds of requests a second (docs/decisions.md, "Errors"). While an outage lasts, it runs
 * that probe itself every OUTAGE_PROBE_MS (an unref'd timer, none outside an outage): when
 * nothing asked for health, system-status or /metrics, the recovery went unsaid, and the next
 * outage's count went on from this one's.
 */
export class DatabaseOutageLog implements OnModuleDestroy {
  /** When the outage's first line was logged (monotonic ms), none while the database answers. */
  private startedAt: number | undefined;
  private lastLineAt = 0;
  private lastUnavailableAt = 0;
  private sinceLastLine = 0;
  private total = 0;
  /** Whether the database answers now (health's `SELECT 1`); none until HealthService gives it. */
  private probe: (() => Promise<boolean>) | undefined;
  private probeTimer: NodeJS.Timeout | undefined;
  private destroyed = false;

  constructor(
    // The filter's context, as the per-request line had: what operators already search for.
    private readonly logger: LoggerService = new Logger('AllExceptionsFilter'),
    private readonly now: () => number = () => performance.now(),
    private readonly probeIntervalMs = OUTAGE_PROBE_MS,
  ) {}

  /** How the log asks the database itself while an outage lasts (HealthService gives it). */
  probeWith(probe: () => Promise<boolean>): void {
    this.probe = probe;
    if (this.startedAt !== undefined) this.probeLater();
  }

  /** A request answered 503 because the database could not be reached; `message` is its error's. */
  unavailable(message: string, requestId: string | undefined): void {
    const now = this.now();
    this.total++;
    this.sinceLastLine++;
    this.lastUnavailableAt = now;
    if (this.startedAt === undefined) {
      this.startedAt = now;
      this.probeLater();
    } else if (now - this.lastLineAt < OUTAGE_LOG_INTERVAL_MS) {
      return;
    }
    const count = this.sinceLastLine;
    this.logger.warn(
      { request_id: requestId, answered_503: count },
      this.total === 1
        ? `database unavailable: ${message}`
        : `database unavailable: ${message} (${count} requests answered 503 since the last line)`,
    );
    this.lastLineAt = now;
    this.sinceLastLine = 0;
  }

  /**
   * Health's own check (its `SELECT 1`) failed: an outage starts here when no request met one
   * first, with its line, outside any request's scope, counting no 503. A replica that only a
   * load balancer's health checks and a scrape reach went through an outage with neither its
   * cause nor its end said (an on-call audit's finding).
   */
  checkFailed(message: string): void {
    const now = this.now();
    this.lastUnavailableAt = now;
    if (this.startedAt !== undefined) return;
    this.startedAt = now;
    this.lastLineAt = now;
    storage.exit(() => {
      this.logger.warn({ answered_503: 0 }, `database unavailable: ${message} (health's check)`);
    });
    this.probeLater();
  }

  /** The database answered: ends an outage that was logged, with one line, once it is quiet. */
  reachable(): void {
    const now = this.now();
    if (this.startedAt === undefined || now - this.lastUnavailableAt < OUTAGE_QUIET_MS) return;
    const seconds = Math.round((now - this.startedAt) / 1000);
    // The outage's line, not a request's: outside the request scope, or it carried the `req` of
    // the request whose probe ran it (or of the outage's first 503, whose timer armed the probe).
    storage.exit(() => {
      this.logger.log(
        { outage_seconds: seconds, answered_503: this.total },
        `database reachable again after ${seconds} s, ${this.total} requests answered 503`,
      );
    });
    this.startedAt = undefined;
    this.sinceLastLine = 0;
    this.total = 0;
  }

  onModuleDestroy(): void {
    this.destroyed = true;
    clearTimeout(this.probeTimer);
    this.probeTimer = undefined;
  }

  /**
   * Arms the next probe, one at a time (the next is armed once one has answered), while an
   * outage lasts. A probe that fails is a database still down.
   */
  private probeLater(): void {
    if (this.probeTimer || !this.probe || this.destroyed) return;
    // Armed by a request's 503, outside its scope: the probes are no part of that request.
    this.probeTimer = storage.exit(() =>
      setTimeout(() => {
        void this.probe!()
          .catch(() => false)
          .then((up) => {
            this.probeTimer = undefined;
            if (up) this.reachable();
            if (this.startedAt !== undefined) this.probeLater();
          });
      }, this.probeIntervalMs).unref(),
    );
  }
}

/** Global: the exception filter (app.setup.ts) counts into it, health's probe ends it. */
@Global()
@Module({
  providers: [{ provide: DatabaseOutageLog, useFactory: () => new DatabaseOutageLog() }],
  exports: [DatabaseOutageLog],
})
export class DatabaseOutageModule {}

import { Inject, Injectable, Logger, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import Redis from 'ioredis';
import { storage } from 'nestjs-pino/storage';
import { EventLoopStalls } from '../event-loop-stalls';
import { within } from '../within';
import { StartupError } from '../lifecycle/startup-failure';
import { redisFailureText } from './redis-failure';
import { redisRefusal } from './redis-refusals';

/** Where Redis is; provided by ConfigModule (REDIS_URL, REDIS_KEY_PREFIX). */
export interface RedisSettings {
  /** None: single-replica mode, every user of Redis keeps its state in process. */
  url: string | undefined;
  /** Prepended to every key this service writes to Redis. */
  keyPrefix: string;
}
export const REDIS_SETTINGS = Symbol('REDIS_SETTINGS');

/** Timeouts of every Redis call: users fall back (rate limits, cache) rather than wait longer. */
export const REDIS_CONNECT_TIMEOUT_MS = 2000;
export const REDIS_COMMAND_TIMEOUT_MS = 1000;
/** How long Redis is left alone after a command of ours failed, before a PING asks again. */
export const REDIS_REST_MS = 2000;
/**
 * A stall of this process this long, within a command's timeout, makes its timeout no sign of
 * Redis (RedisConnection.failed): half the timeout, so that the reply may well have waited unread.
 */
export const OWN_STALL_MS = REDIS_COMMAND_TIMEOUT_MS / 2;
/**
 * Whether an error is the server's refusal of the connection's SELECT: past its `databases`
 * setting, or any at all (a cluster-mode server, a managed tier with database 0 only). ioredis
 * names the command a refusal answered.
 */
function refusedSelect(error: Error): boolean {
  return (error as Error & { command?: { name?: string } }).command?.name === 'select';
}
/** ioredis' error for a command that got no answer within REDIS_COMMAND_TIMEOUT_MS. */
const TIMED_OUT = 'Command timed out';
/** At most one warning in this time about timeouts this process' stalls caused. */
const STALL_WARNING_INTERVAL_MS = 60_000;

/** The shared Redis connection, or none when REDIS_URL is unset (single-replica mode). */
@Injectable()
export class RedisConnection implements OnModuleInit, OnApplicationShutdown {
  readonly client: Redis | null;
  private readonly logger = new Logger('Redis');
  /**
   * 0 while Redis answers; after a failed command, the time (Date.now()) until which it is not
   * used. A Redis that is connected but does not answer (stopped, swamped) fails each command
   * only at REDIS_COMMAND_TIMEOUT_MS: without this rest every request would wait that long.
   */
  private restUntil = 0;
  /** The one PING out that asks whether Redis answers again (undefined: none): answered or not. */
  private probing: Promise<boolean> | undefined;
  /** Why the last PING that asked went unanswered, until one is answered. */
  private probeError: string | undefined;
  /** What the connection last failed with (refused, wrong password…), until it is ready again. */
  private lastError: string | undefined;
  /** This process' own stalls, which time commands out as a hanging Redis does. */
  private readonly stalls: EventLoopStalls | undefined;
  private stallWarnedAt = Number.NEGATIVE_INFINITY;
  /** Why the connection's database could not be selected (REDIS_URL's number), until it can. */
  private wrongDatabase: string | undefined;
  /** Set once the start has waited for the first connection (onModuleInit). */
  private started = false;
  /** The PING due when a rest ends (probeAfterRest), while one is due. */
  private restTimer: NodeJS.Timeout | undefined;
  private closing = false;

  constructor(@Inject(REDIS_SETTINGS) private readonly settings: RedisSettings) {
    this.client = settings.url
      ? new Redis(settings.url, {
          // Fail commands quickly instead of queueing them while Redis is unreachable.
          maxRetriesPerRequest: 1,
          connectTimeout: REDIS_CONNECT_TIMEOUT_MS,
          commandTimeout: REDIS_COMMAND_TIMEOUT_MS,
          lazyConnect: false,
          // Applied by ioredis to every key, including the KEYS of the rate limiter's script.
          keyPrefix: settings.keyPrefix,
          // By default ioredis sends again, on the new connection, every command the dropped one
          // left unanswered, those that had timed out too: a rate-limit script Redis had run was
          // run twice, and a request already counted in this process counted in Redis as well
          // (a Redis faults audit: 10 requests charged 20). Unanswered, a command times out
          // (REDIS_COMMAND_TIMEOUT_MS) and its caller falls back, once.
          autoResendUnfulfilledCommands: false,
          // A primary demoted to a replica by a failover keeps the connection and refuses every
          // write (READONLY): reconnected, a failover that moved the address (a managed Redis'
          // DNS name) reaches the new primary. Kept, the limits stayed in each replica's memory
          // until a restart (a hosted-Redis audit).
          // Before Redis 7, a script's error quotes the refusal (`… -READONLY …`).
          reconnectOnError: (error) => /(?:^|-)READONLY\b/.test(error.message),
        })
      : null;
    this.stalls = this.client ? new EventLoopStalls(OWN_STALL_MS) : undefined;
    // ioredis reconnects by itself (every 2 s at most). Its error events (one per attempt) are
    // kept as the cause system-status shows, and logged once per outage.
    this.client?.on('connect', () => (this.wrongDatabase = undefined));
    this.client?.on('error', (error: Error) => {
      // ioredis reports a failed SELECT and goes on, connected, on database 0: another replica's
      // counts, or another deployment's (a configuration audit's finding). Such a connection
      // is not used; a start that meets it fails (onModuleInit). Said of an index past the
      // server's range only, at first: a cluster-mode server's "SELECT is not allowed" went on
      // with database 0 (a hosted-Redis audit).
      if (refusedSelect(error)) {
        this.wrongDatabase = redisFailureText(error);
        // During the start, which then fails saying so, "kept in this process" read as the
        // service carrying on (an error texts audit's finding).
        if (this.started)
          this.logger.warn(
            `Redis not used: ${this.wrongDatabase} (rate limits and the cache kept in this process)`,
          );
        return;
      }
      if (this.lastError === undefined)
        this.logger.warn(
          `Redis unreachable: ${redisFailureText(error)}; reconnecting (rate limits and the cache kept in this process meanwhile)`,
        );
      this.lastError = error.message;
    });
    this.client?.on('ready', () => {
      if (this.lastError !== undefined && !this.wrongDatabase)
        storage.exit(() => this.logger.log('Redis connected again'));
      this.lastError = undefined;
      // Back after a rest that is over: its PING now, not at the timer's next turn.
      if (this.restUntil !== 0) void this.probe();
    });
  }

  /**
   * Why Redis is not used now, for system-status, health and the gauge; undefined while it is.
   * Asking is a use too: a replica only scraped (out of rotation, idle) would otherwise send no
   * PING after a blip, and say "not used" for as long as no request came (an audit saw it). So
   * once a rest is over, asking sends the PING that ends it (or joins the one out) and answers
   * from it, waiting at most a command's timeout: the first scrape after a hang cleared said 0
   * while its own PING was about to be answered (a review saw it). While resting, it says so at
   * once. Never holds the URL: ioredis' messages name the address and the server's refusal, not
   * the password.
   */
  async problem(): Promise<string | undefined> {
    const notUsed = this.notUsed();
    if (notUsed !== undefined) return notUsed;
    if (this.restUntil === 0) return undefined;
    const probe = this.probe();
    if (probe) await within(probe, REDIS_COMMAND_TIMEOUT_MS).catch(() => false);
    return this.notUsed() ?? (this.restUntil === 0 ? undefined : this.resting());
  }

  /** Why the connection is not there (undefined: it is, or there is no Redis). */
  private notUsed(): string | undefined {
    const client = this.client;
    if (this.wrongDatabase) return `not used: ${this.wrongDatabase}`;
    if (!client || client.status === 'ready') return undefined;
    return `not connected (${client.status})${this.lastError ? `: ${this.lastError}` : ''}`;
  }

  /** Why Redis is not used while resting: the failed command, or the PING that asked after it. */
  private resting(): string {
    if (this.probing) return 'not used after a failed command: its PING is not answered yet';
    const seconds = (Math.max(0, this.restUntil - Date.now()) / 1000).toFixed(1);
    const ping = this.probeError ? `; its PING was not answered either (${this.probeError})` : '';
    return `not used after a failed command${ping}: resting, a PING asks again in ${seconds} s`;
  }

  /**
   * Start-up waits for the first connection (at most the connect timeout), so that the first
   * requests already share limits; a Redis that is down at start only delays the start.
   */
  async onModuleInit(): Promise<void> {
    try {
      await this.firstConnection();
    } finally {
      this.started = true;
    }
  }

  private async firstConnection(): Promise<void> {
    const client = this.client;
    if (!client) return;
    // A connection already ready is checked too: ioredis is ready after a refused SELECT, and
    // such a start went on, counting in this process (3 starts in 8, as the connection won the
    // race with the modules' set-up; a Redis faults audit).
    if (client.status !== 'ready') await this.readyWithin(client, REDIS_CONNECT_TIMEOUT_MS);
    if (this.wrongDatabase)
      throw new StartupError(`Startup failed: REDIS_URL cannot be used: ${this.wrongDatabase}`);
    // A Redis that is there is asked, once, each kind of command the service will send it.
    const refusal =
      client.status === 'ready' ? await redisRefusal(client, this.settings.keyPrefix) : undefined;
    if (refusal)
      throw new StartupError(
        `Startup failed: REDIS_URL cannot be used: ${refusal} (README, "Redis as the replicas share it")`,
      );
  }

  private async readyWithin(client: Redis, timeoutMs: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    let onReady: (() => void) | undefined;
    await new Promise<void>((resolve) => {
      onReady = resolve;
      client.once('ready', onReady);
      timer = setTimeout(resolve, timeoutMs);
    });
    clearTimeout(timer);
    if (onReady) client.off('ready', onReady);
  }

  /**
   * The client when it is connected and has not failed lately, else null: while Redis is down
   * or hanging callers use their in-process fallback at once instead of a command that would
   * only time out. Runs on every request: while Redis answers it costs one number comparison.
   */
  ready(): Redis | null {
    if (this.wrongDatabase) return null;
    if (this.restUntil !== 0) {
      void this.probe();
      return null;
    }
    return this.client?.status === 'ready' ? this.client : null;
  }

  /**
   * Called by whoever got an error or a timeout from a command: Redis is not used for
   * REDIS_REST_MS, then one PING at a time asks whether it answers again. Answers whether Redis
   * was rested: not for a timeout while this process itself stalled (OWN_STALL_MS), whose reply
   * most likely waited unread here (a flood of requests: Redis answered in 70 µs, each replica
   * fell back, and a key in its cool-down was admitted; an audit's finding). Its caller answers
   * that request without Redis; the next ones use Redis (docs/decisions.md, "Outages").
   */
  failed(reason: string): boolean {
    if (reason === TIMED_OUT && this.stalls?.stalledWithin(REDIS_COMMAND_TIMEOUT_MS)) {
      const now = Date.now();
      if (now - this.stallWarnedAt >= STALL_WARNING_INTERVAL_MS) {
        this.stallWarnedAt = now;
        this.logger.warn(
          `Redis command timed out while this process stalled (${OWN_STALL_MS} ms or more): ` +
            'Redis still used',
        );
      }
      return false;
    }
    if (this.restUntil === 0)
      // The process's line: which request met the failure first says nothing (an audit).
      storage.exit(() =>
        this.logger.warn(`Redis command failed (${reason}): not used until it answers a PING`),
      );
    this.restUntil = Date.now() + REDIS_REST_MS;
    this.probeAfterRest();
    return true;
  }

  /**
   * A PING once the rest is over, and after each unanswered one, whether or not a request comes.
   * Without it a replica idle when a hang cleared (out of rotation, a quiet hour) rested until
   * its next request, which was then counted in this process with all that came with it: a
   * burst 3 s after Redis was back, every request (a Redis faults audit). While the connection
   * is down the timer asks again every REDIS_REST_MS without moving the rest's end: a reconnect
   * then ends the rest at once (the 'ready' handler's PING), where pushing it on kept a replica
   * counting in memory up to 2 s after every Redis restart (a review). Unref'd: it never holds
   * the process.
   */
  private probeAfterRest(delayMs = Math.max(0, this.restUntil - Date.now())): void {
    if (this.restTimer || this.closing) return;
    this.restTimer = setTimeout(() => {
      this.restTimer = undefined;
      if (this.restUntil === 0 || this.closing) return;
      if (this.probe()) return;
      // Not connected: asked again a rest later. Connected, the timer ran a moment early (libuv's
      // clock is not Date.now()): the moment left, not a whole rest more (a review saw 4 s).
      const connected = this.client?.status === 'ready';
      this.probeAfterRest(connected ? Math.max(1, this.restUntil - Date.now()) : REDIS_REST_MS);
    }, delayMs);
    this.restTimer.unref();
  }

  /**
   * Undefined while resting; once the rest is over, the one PING that ends it if answered
   * (started now, or the one already out), resolving to whether it was.
   */
  private probe(): Promise<boolean> | undefined {
    const client = this.client;
    if (this.probing) return this.probing;
    if (Date.now() < this.restUntil || client?.status !== 'ready') return undefined;
    this.probing = client.ping().then(
      () => {
        this.probing = undefined;
        this.probeError = undefined;
        this.restUntil = 0;
        // The process's line, not the request's whose check sent the PING (an on-call audit).
        storage.exit(() => this.logger.log('Redis answers again'));
        return true;
      },
      (error: Error) => {
        this.probing = undefined;
        this.probeError = redisFailureText(error);
        this.restUntil = Date.now() + REDIS_REST_MS;
        this.probeAfterRest();
        return false;
      },
    );
    return this.probing;
  }

  async onApplicationShutdown(): Promise<void> {
    this.closing = true;
    clearTimeout(this.restTimer);
    this.restTimer = undefined;
    this.stalls?.stop();
    await this.client?.quit().catch(() => this.client?.disconnect());
  }
}

import { Inject, Injectable, Logger, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import type Redis from 'ioredis';
import { isRecord } from '../is-record';
import { REDIS_SETTINGS, RedisConnection, RedisSettings } from './redis-connection';

/** What a replica says on the channel: the database number its REDIS_URL names. */
interface Announcement {
  db: number;
  /** An answer to another's announcement, which is not answered again. */
  reply: boolean;
}

/**
 * Finds replicas whose REDIS_URL names another database number of the same Redis. Keys live in a
 * database, pub/sub channels in the server: such replicas keep two budgets per API key (each
 * admits the whole limit) while still hearing each other's key changes, so nothing else shows
 * the mistake (an admin's audit). Each replica announces its number on a channel when it
 * subscribes; one that hears another number warns, and answers once, so that the replica
 * started first warns too.
 */
@Injectable()
export class ReplicaDatabases implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger('Redis');
  private readonly channel: string;
  private readonly db: number;
  private subscriber: Redis | undefined;
  private readonly warned = new Set<number>();

  constructor(
    private readonly redis: RedisConnection,
    @Inject(REDIS_SETTINGS) settings: RedisSettings,
  ) {
    // Channels are not keys: the prefix keeps deployments sharing a Redis apart.
    this.channel = `${settings.keyPrefix}replica-database`;
    this.db = Number(redis.client?.options.db ?? 0);
  }

  onModuleInit(): void {
    const client = this.redis.client;
    if (!client) return;
    const subscriber = client.duplicate();
    this.subscriber = subscriber;
    subscriber.on('error', () => undefined);
    subscriber.on('message', (channel: string, message: string) => {
      if (channel === this.channel) this.heard(message);
    });
    // At every (re)connection, the first included: a replica that came back after an outage
    // announces itself again. Not awaited: a Redis down at start must not delay the start.
    subscriber.on('ready', () => void this.announce(subscriber));
    // And when the shared connection (which sends it) is back, should it come back after.
    client.on('ready', () => void this.send(false));
  }

  private async announce(subscriber: Redis): Promise<void> {
    try {
      await subscriber.subscribe(this.channel);
      await this.send(false);
    } catch {
      // Redis down: RedisConnection says so; the next connection announces.
    }
  }

  /**
   * Anything may arrive: channels belong to the Redis server, not to a database or a deployment,
   * and any of its clients can publish on this one. A throw here would be thrown inside ioredis'
   * reader, an uncaught exception that ends the process (a `null` did, on every replica at once:
   * an error-paths audit), so whatever is not an announcement is ignored.
   */
  private heard(message: string): void {
    const announcement = announcementOf(message);
    if (!announcement || announcement.db === this.db) return;
    if (!this.warned.has(announcement.db)) {
      this.warned.add(announcement.db);
      this.logger.warn(
        `another replica uses Redis database ${announcement.db}, this one database ${this.db}: ` +
          'each keeps its own rate-limit counts, so every API key gets its limit once per ' +
          'database. Give every replica the same REDIS_URL, database number included; another ' +
          'deployment on this Redis (not a replica) is told apart by a REDIS_KEY_PREFIX of its own',
      );
    }
    if (!announcement.reply) void this.send(true);
  }

  /**
   * On the shared connection whenever it is connected: not through `ready()`, which is null while
   * it rests after a failed command, just when a replica back from an outage announces itself (a
   * review's finding). A publish that fails is lost; the next (re)connection announces again.
   */
  private async send(reply: boolean): Promise<void> {
    const client = this.redis.client;
    if (client?.status !== 'ready') return;
    const announcement: Announcement = { db: this.db, reply };
    await client.publish(this.channel, JSON.stringify(announcement)).catch(() => undefined);
  }

  async onApplicationShutdown(): Promise<void> {
    await this.subscriber?.quit().catch(() => this.subscriber?.disconnect());
  }
}

/**
 * The largest database number an announcement is read with. Redis numbers its databases below
 * its `databases` setting (16 by default); bounded, the numbers warned of are too, whatever
 * another client of the server publishes here (a review's finding).
 */
const MAX_DATABASE = 65_535;

/** The announcement a message holds, or undefined for anything else. */
function announcementOf(message: string): Announcement | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(message);
  } catch {
    return undefined;
  }
  if (!isRecord(parsed)) return undefined;
  const { db, reply } = parsed;
  if (typeof db !== 'number' || !Number.isInteger(db) || db < 0 || db > MAX_DATABASE)
    return undefined;
  return { db, reply: reply === true };
}

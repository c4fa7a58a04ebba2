import { Logger } from '@nestjs/common';
import { RedisConnection } from '../../src/common/redis/redis-connection';
import { ReplicaDatabases } from '../../src/common/redis/replica-databases';
import { testRedisPrefix, testRedisUrl } from '../support/test-app';
import { until } from '../support/until';

/** The URL of the test Redis with another database number: pub/sub only, no key is written. */
function otherDatabase(url: string): string {
  const parsed = new URL(url);
  const db = Number(parsed.pathname.slice(1) || 0);
  parsed.pathname = `/${(db + 1) % 16}`;
  return parsed.toString();
}

/**
 * Replicas whose REDIS_URL names two database numbers of one Redis keep two rate-limit counts per
 * key while hearing each other's key changes: each says so, against a real Redis.
 */
describe(ReplicaDatabases.name, () => {
  const started: { connection: RedisConnection; replica: ReplicaDatabases }[] = [];
  let warnings: string[];
  const prefix = testRedisPrefix();

  async function start(url: string) {
    const connection = new RedisConnection({ url, keyPrefix: prefix });
    const replica = new ReplicaDatabases(connection, { url, keyPrefix: prefix });
    started.push({ connection, replica });
    await connection.onModuleInit();
    replica.onModuleInit();
  }

  beforeEach(() => {
    warnings = [];
    jest.spyOn(Logger.prototype, 'warn').mockImplementation((message: unknown) => {
      if (typeof message === 'string' && message.includes('Redis database')) warnings.push(message);
    });
  });
  afterEach(async () => {
    for (const { connection, replica } of started.splice(0)) {
      await replica.onApplicationShutdown();
      await connection.onApplicationShutdown();
    }
    jest.restoreAllMocks();
  });

  it('warns on both replicas when they name two database numbers', async () => {
    const url = testRedisUrl();
    const db = Number(new URL(url).pathname.slice(1) || 0);
    const other = (db + 1) % 16;
    await start(url);
    await start(otherDatabase(url));
    await until(async () => (warnings.length >= 2 ? true : undefined), 5000);
    expect(warnings.sort()).toEqual(
      [
        `another replica uses Redis database ${db}, this one database ${other}`,
        `another replica uses Redis database ${other}, this one database ${db}`,
      ]
        .map(
          (head) =>
            `${head}: each keeps its own rate-limit counts, so every API key gets its limit once ` +
            'per database. Give every replica the same REDIS_URL, database number included; ' +
            'another deployment on this Redis (not a replica) is told apart by a REDIS_KEY_PREFIX ' +
            'of its own',
        )
        .sort(),
    );
  });

  it('says nothing of replicas on the same database', async () => {
    await start(testRedisUrl());
    await start(testRedisUrl());
    // Announcements cross in a few ms on loopback.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(warnings).toEqual([]);
  });

  it('ignores whatever else is published on its channel, which any client of the Redis server can', async () => {
    // Channels belong to the server, not to a database, and the name is predictable: a `null` once
    // ended the process from inside ioredis' reader, every replica at once (an error-paths audit).
    const url = testRedisUrl();
    await start(url);
    const connection = started[0].connection;
    const channel = `${prefix}replica-database`;
    const db = Number(new URL(url).pathname.slice(1) || 0);
    const announce = (other: number) =>
      connection.client!.publish(channel, JSON.stringify({ db: other, reply: true }));
    // Once one announcement is heard, the replica is subscribed.
    await until(
      async () => ((await announce((db + 1) % 16)) && warnings.length >= 1 ? true : undefined),
      5000,
    );
    const stray = [
      'null',
      '"x"',
      '[]',
      '1',
      'true',
      '{}',
      '{"db":null}',
      '{"db":"3"}',
      '{"db":-1}',
      '{"db":65536}',
      'not json',
    ];
    for (const message of stray) await connection.client!.publish(channel, message);
    // One published after them all is heard: the replica still listens, and the process lives.
    await announce((db + 2) % 16);
    await until(async () => (warnings.length >= 2 ? true : undefined), 5000);
    expect(warnings[1]).toContain(`another replica uses Redis database ${(db + 2) % 16}`);
  });
});

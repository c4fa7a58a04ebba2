import { Logger } from '@nestjs/common';
import Redis from 'ioredis';
import { RedisConnection } from '../../src/common/redis/redis-connection';
import { KeyChanges } from '../../src/modules/api-keys/key-changes';
import { startThrowawayRedis, ThrowawayRedis } from '../support/throwaway-servers';
import { until } from '../support/until';
import { testConfig } from '../support/test-config';

const PREFIX = 'key-changes-test:';

/**
 * The announcements of changed keys against a real Redis that goes away and comes back: a
 * replica hears them whenever Redis is there, whether or not it was there when the replica started.
 */
describe('KeyChanges', () => {
  let redis: ThrowawayRedis;
  let connection: RedisConnection;
  let changes: KeyChanges;
  let publisher: Redis;
  const heard: string[] = [];

  beforeEach(async () => {
    jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    jest.spyOn(Logger.prototype, 'log').mockImplementation(() => undefined);
    redis = await startThrowawayRedis();
    publisher = new Redis(redis.url, { maxRetriesPerRequest: 1, keyPrefix: PREFIX });
    publisher.on('error', () => undefined);
    heard.length = 0;
  });
  afterEach(async () => {
    await changes?.onApplicationShutdown();
    await connection?.onApplicationShutdown();
    publisher.disconnect();
    await redis.stop();
    jest.restoreAllMocks();
  });

  async function startReplica(): Promise<void> {
    connection = new RedisConnection({ url: redis.url, keyPrefix: PREFIX });
    await connection.onModuleInit();
    changes = new KeyChanges(connection, testConfig({ redisKeyPrefix: PREFIX }));
    changes.onChanged((keyId) => heard.push(keyId));
    await changes.onModuleInit();
  }

  /** Announces `keyId` (as another replica would, through its own connection) until it is heard. */
  async function untilHeard(keyId: string): Promise<void> {
    await until(
      async () => {
        await publisher.publish(`${PREFIX}api-key-changed`, keyId).catch(() => undefined);
        return heard.includes(keyId) ? true : undefined;
      },
      15_000,
      200,
    );
  }

  it('hears a change announced by another replica, and again after Redis restarted', async () => {
    await startReplica();
    await untilHeard('key-1');
    await redis.stop();
    await redis.start();
    await untilHeard('key-2');
  }, 40_000);

  it('hears changes once Redis is up when it was down as the replica started', async () => {
    // Before: the subscription failed at start and was never asked again, so this replica kept
    // a deactivated key for its cache's lifetime (KEY_CACHE_TTL_MS) until it restarted.
    await redis.stop();
    await startReplica();
    await redis.start();
    await untilHeard('key-1');
  }, 40_000);
});

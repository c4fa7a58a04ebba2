import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Logger } from '@nestjs/common';
import Redis from 'ioredis';
import { RedisConnection } from '../../src/common/redis/redis-connection';
import { OUT_OF_MEMORY } from '../../src/common/redis/redis-refusals';
import { ResponseCache } from '../../src/common/redis/response-cache';
import { startThrowawayRedis, ThrowawayRedis } from '../support/throwaway-servers';

/**
 * Redis as hosted providers give it (a hosted-Redis audit): what refuses a kind of command the
 * service sends is refused at start, in one line, where it had been a flapping outage with the
 * limits counted in each replica's memory; a server that answers is not rested for a cache
 * entry its memory has no room for.
 */
describe('a Redis that refuses what the service asks of it', () => {
  const servers: ThrowawayRedis[] = [];
  const connections: RedisConnection[] = [];
  const directories: string[] = [];
  const server = async (options: string[] = []) => {
    const started = await startThrowawayRedis(options);
    servers.push(started);
    return started;
  };
  const connect = (url: string) => {
    const connection = new RedisConnection({ url, keyPrefix: 'gw:' });
    connections.push(connection);
    return connection;
  };
  const onServer = async <T>(url: string, work: (client: Redis) => Promise<T>): Promise<T> => {
    const client = new Redis(url);
    try {
      return await work(client);
    } finally {
      client.disconnect();
    }
  };
  /** A cluster-mode server's own directory, for the nodes file it writes. */
  const clusterOptions = () => {
    const directory = mkdtempSync(join(tmpdir(), 'gw-redis-cluster-'));
    directories.push(directory);
    return ['--cluster-enabled', 'yes', '--dir', directory];
  };

  /** The README's ACL: the prefix's keys and channels, the commands the service sends. */
  const README_ACL = ['~gw:*', '&gw:*', '-@all', '+@read', '+@write', '+@scripting'];
  const README_COMMANDS = ['+@transaction', '+@pubsub', '+ping', '+info'];
  /** A Redis of its own whose user `gateway` has `rules`; the URL that connects as that user. */
  const asUser = async (rules: string[]) => {
    const redis = await server();
    await onServer(redis.url, (client) =>
      client.acl('SETUSER', 'gateway', 'on', 'nopass', ...rules),
    );
    return redis.url.replace('redis://', 'redis://gateway@');
  };

  beforeEach(() => {
    // ioredis' own line for a user without INFO ("Skipping the ready check").
    jest.spyOn(console, 'warn').mockImplementation(() => undefined);
    jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    jest.spyOn(Logger.prototype, 'log').mockImplementation(() => undefined);
  });
  afterEach(async () => {
    jest.restoreAllMocks();
    for (const connection of connections.splice(0)) connection.client?.disconnect();
    for (const stopped of servers.splice(0)) await stopped.stop();
    for (const directory of directories.splice(0))
      rmSync(directory, { recursive: true, force: true });
  });

  it('starts on a Redis that takes every kind of command, with an ACL user limited to them', async () => {
    const url = await asUser([...README_ACL, ...README_COMMANDS]);
    const connection = connect(url);
    await connection.onModuleInit();
    expect(connection.ready()).toBe(connection.client);
    expect(console.warn).not.toHaveBeenCalled();
  }, 15_000);

  // A failover that demotes the primary keeps the connection: every write was refused until a
  // restart. Reconnected, a managed Redis' name leads to the new primary.
  it('reconnects on a write refused as READONLY, and on no other refusal', () => {
    const reconnects = connect('redis://127.0.0.1:1').client!.options.reconnectOnError!;
    expect(reconnects(new Error("READONLY You can't write against a read only replica."))).toBe(
      true,
    );
    expect(
      reconnects(
        new Error(
          "ERR Error running script (call to f_0): @user_script:1: @user_script: 1: -READONLY You can't write against a read only replica.",
        ),
      ),
    ).toBe(true);
    expect(reconnects(new Error('NOPERM this user has no permissions'))).toBe(false);
  });

  it('refuses an ACL user without transactions, naming the command refused', async () => {
    const url = await asUser([
      ...README_ACL,
      ...README_COMMANDS.filter((rule) => rule !== '+@transaction'),
    ]);
    await expect(connect(url).onModuleInit()).rejects.toThrow(
      /^Startup failed: REDIS_URL cannot be used: a transaction \(MULTI\/EXEC, as a master key's request reads its counts\) was refused: EXECABORT .*NOPERM .*'exec'/,
    );
  }, 15_000);

  it('refuses an ACL user without the channels', async () => {
    const url = await asUser([
      ...README_ACL.filter((rule) => rule !== '&gw:*'),
      'resetchannels',
      ...README_COMMANDS,
    ]);
    await expect(connect(url).onModuleInit()).rejects.toThrow(/was refused: NOPERM .*channel/);
  }, 15_000);

  // Its script's keys are in several hash slots: CROSSSLOT, and only 20 of 600 requests counted.
  it('refuses a cluster-mode server', async () => {
    const redis = await server(clusterOptions());
    await onServer(redis.url, (client) => client.cluster('ADDSLOTSRANGE', 0, 16383));
    await expect(connect(redis.url).onModuleInit()).rejects.toThrow(
      /^Startup failed: REDIS_URL cannot be used: a script writing keys of two hash slots \(EVAL, as the rate limiter sends it\) was refused: CROSSSLOT/,
    );
  }, 15_000);

  // ioredis went on with database 0 after "SELECT is not allowed in cluster mode".
  it('refuses a database number the server refuses to select, whatever its reason', async () => {
    const redis = await server(clusterOptions());
    const connection = connect(`${redis.url}/3`);
    await expect(connection.onModuleInit()).rejects.toThrow(
      /^Startup failed: REDIS_URL cannot be used: .*SELECT is not allowed in cluster mode/,
    );
    expect(connection.ready()).toBeNull();
  }, 15_000);

  it('refuses a read-only replica', async () => {
    const primary = await server();
    const replica = await server(['--replicaof', '127.0.0.1', String(primary.port)]);
    await expect(connect(replica.url).onModuleInit()).rejects.toThrow(/was refused: READONLY/);
  }, 15_000);

  // Under `noeviction` with its memory full, each cached answer rested Redis for 2 s: every
  // replica's limits moved into its memory.
  it('starts on a server whose memory is full, and rests it for no cache entry refused', async () => {
    const redis = await server(['--maxmemory', '1mb', '--maxmemory-policy', 'noeviction']);
    const connection = connect(redis.url);
    await connection.onModuleInit();
    await new ResponseCache(connection).set('answer', { items: [] }, 60);
    expect(Logger.prototype.warn).toHaveBeenCalledWith(
      expect.stringMatching(/^cache write failed: OOM/),
    );
    expect(connection.ready()).toBe(connection.client);
    // Before Redis 7, a script's refusal for memory comes quoted.
    expect(
      OUT_OF_MEMORY.test(
        'ERR Error running script (call to f_0): @user_script:1: -OOM command not allowed when used memory > maxmemory.',
      ),
    ).toBe(true);
  }, 15_000);
});

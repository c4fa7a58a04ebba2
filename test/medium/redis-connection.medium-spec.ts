import { setTimeout as sleep } from 'node:timers/promises';
import { Logger } from '@nestjs/common';
import { Store, storage as logScope } from 'nestjs-pino/storage';
import { pino } from 'pino';
import { freePort } from '../../bench/support/ports';
import {
  REDIS_COMMAND_TIMEOUT_MS,
  OWN_STALL_MS,
  REDIS_CONNECT_TIMEOUT_MS,
  REDIS_REST_MS,
  RedisConnection,
} from '../../src/common/redis/redis-connection';
import { EventLoopStalls } from '../../src/common/event-loop-stalls';
import { ResponseCache } from '../../src/common/redis/response-cache';
import { testRedisPrefix, testRedisUrl } from '../support/test-app';
import { startThrowawayRedis, ThrowawayRedis } from '../support/throwaway-servers';
import { until } from '../support/until';

/**
 * The shared Redis connection against a real Redis: when the service uses it, when it leaves it
 * alone (down, or a command failed), and how it comes back to it.
 */
describe('RedisConnection', () => {
  const connections: RedisConnection[] = [];
  const connect = (url = testRedisUrl()) => {
    const connection = new RedisConnection({ url, keyPrefix: testRedisPrefix() });
    connections.push(connection);
    return connection;
  };

  /** Runs `test` on a connection to a Redis of its own, started first, thawed and stopped after. */
  const onThrowawayRedis = async (
    test: (server: ThrowawayRedis, redis: RedisConnection) => Promise<void>,
  ) => {
    const server = await startThrowawayRedis();
    try {
      const redis = connect(server.url);
      await redis.onModuleInit();
      await test(server, redis);
    } finally {
      server.resume();
      await server.stop();
    }
  };

  /** Until ioredis says the connection is ready (which it does after a refused SELECT too). */
  const connected = (redis: RedisConnection) =>
    until(() => Promise.resolve(redis.client?.status === 'ready' || undefined), 10_000, 5);

  /** Whether a PING that ended a rest was answered (its line, logged through the spy below). */
  const answeredAgain = () =>
    jest.mocked(Logger.prototype.log).mock.calls.some(([line]) => line === 'Redis answers again');

  // A calm process unless a test stalls it on purpose: a timeout met while this process stalled
  // rests nothing, and a busy test machine's own stall (a collection, another suite's load) made
  // the tests of rests fail now and then (a fresh-clone CI run).
  let stalls: jest.SpyInstance;
  beforeEach(() => {
    jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    jest.spyOn(Logger.prototype, 'log').mockImplementation(() => undefined);
    stalls = jest.spyOn(EventLoopStalls.prototype, 'stalledWithin').mockReturnValue(false);
  });
  afterEach(() => {
    jest.restoreAllMocks();
    for (const connection of connections.splice(0)) connection.client?.disconnect();
  });

  it('waits at start for the first connection, so that the first requests already share counts', async () => {
    const redis = connect();
    await redis.onModuleInit();
    expect(redis.ready()).toBe(redis.client);
    expect(await redis.problem()).toBeUndefined();
  });

  // A Redis that is down at start delays the start; it must not stop it.
  it('starts within the connect timeout when Redis is not there, and says why it is not used', async () => {
    const redis = connect(`redis://127.0.0.1:${await freePort()}`);
    const started = Date.now();
    await redis.onModuleInit();
    // The wait ends at the 2 s connect timeout: within twice that (not a second over it, which a
    // loaded machine's stall could pass), so that a start waiting out a second attempt fails.
    expect(Date.now() - started).toBeLessThan(2 * REDIS_CONNECT_TIMEOUT_MS);
    expect(redis.ready()).toBeNull();
    expect(await redis.problem()).toMatch(/^not connected \(\w+\): .*ECONNREFUSED/);
  }, 10_000);

  // ioredis reports a failed SELECT and goes on, connected, on database 0: another replica's
  // counts (a configuration audit). The start refuses it, naming REDIS_URL.
  it('refuses a database number the server does not have, naming REDIS_URL, and never uses database 0', async () => {
    const url = new URL(testRedisUrl());
    url.pathname = '/99999';
    const redis = connect(url.toString());
    await expect(redis.onModuleInit()).rejects.toThrow(
      "Startup failed: REDIS_URL cannot be used: ERR DB index is out of range: the server has fewer databases (its `databases` setting) than the number REDIS_URL's path names",
    );
    expect(redis.ready()).toBeNull();
    expect(await redis.problem()).toMatch(/^not used: ERR DB index is out of range/);
    // No "Redis not used … kept in this process" before the start's failure line: it read as
    // the service carrying on (an error texts audit's finding).
    expect(Logger.prototype.warn).not.toHaveBeenCalledWith(
      expect.stringMatching(/^Redis not used/),
    );
  }, 10_000);

  // ioredis is ready after a refused SELECT: a start that found the connection ready already
  // went on without looking (3 starts in 8; a Redis faults audit).
  it('refuses such a database number when the connection is ready before the start asks', async () => {
    const url = new URL(testRedisUrl());
    url.pathname = '/99999';
    const redis = connect(url.toString());
    await connected(redis);
    await expect(redis.onModuleInit()).rejects.toThrow(
      'Startup failed: REDIS_URL cannot be used: ERR DB index is out of range',
    );
  }, 10_000);

  // The rest's timer, asking again while Redis was down, pushed the rest's end on: after every
  // restart a replica counted in memory up to 2 s more (a review).
  it(
    'uses Redis again as soon as it reconnects after an outage longer than a rest',
    () =>
      onThrowawayRedis(async (server, redis) => {
        await server.stop();
        await redis.client!.get('key').catch((error: Error) => redis.failed(error.message));
        // Several of the timer's turns while Redis is down.
        await sleep(2 * REDIS_REST_MS + 500);
        await server.start();
        await connected(redis);
        // A PING of the test's own, answered after the one the reconnect sent ('ready' is emitted
        // before the status is seen here): a fixed 200 ms could pass before it was answered on a
        // loaded machine, where with the rest pushed on no PING was sent at all.
        await redis.client!.ping();
        expect(redis.ready()).toBe(redis.client);
      }),
    20_000,
  );

  // ioredis' default sent a dropped connection's unanswered commands again on the next one,
  // those that had timed out too: a rate-limit script ran twice (a Redis faults audit).
  it(
    'never sends again, on a new connection, a command that timed out on the dropped one',
    () =>
      onThrowawayRedis(async (server, redis) => {
        server.pause();
        await expect(redis.client!.incr('sent-once')).rejects.toThrow('Command timed out');
        // The paused server dies with the command unread; a fresh one takes the port.
        await server.stop();
        await server.start();
        await connected(redis);
        await sleep(300);
        expect(await redis.client!.get('sent-once')).toBeNull();
      }),
    20_000,
  );

  // A replica idle when a hang clears (out of rotation, a quiet hour) rested until its next
  // request, which was then counted in this process, with the whole burst it came in.
  it(
    'asks with a PING when a rest is over, without waiting for a request',
    () =>
      onThrowawayRedis(async (server, redis) => {
        server.pause();
        await redis.client!.get('key').catch((error: Error) => redis.failed(error.message));
        server.resume();
        // Neither ready() nor problem() is called meanwhile: nothing but the rest's end asks.
        // Its answer is told by the line it logs (a fixed rest + 500 ms, on a loaded machine, could
        // end before it came).
        await until(async () => answeredAgain() || undefined, REDIS_REST_MS + 10_000);
        expect(redis.ready()).toBe(redis.client);
      }),
    20_000,
  );

  // Unref'd, it held nothing; still, a shut-down connection has no PING to send (a review).
  it('arms no rest timer once shut down, a failure after included', async () => {
    const redis = connect();
    await redis.onModuleInit();
    redis.failed('Connection is closed.');
    await redis.onApplicationShutdown();
    redis.failed('Connection is closed.');
    // The timer is private: read as the test's own view of it.
    expect((redis as unknown as { restTimer?: NodeJS.Timeout }).restTimer).toBeUndefined();
  });

  // Under the request whose command met the failure first, it read as that request's trouble.
  it("says a command failed as the process's line, not the request's", async () => {
    const redis = connect();
    await redis.onModuleInit();
    const under: unknown[] = [];
    jest.mocked(Logger.prototype.warn).mockImplementation(() => {
      under.push(logScope.getStore()?.logger.bindings().req ?? 'no request');
    });
    const request = new Store(pino({ enabled: false }).child({ req: { id: 'unrelated' } }));
    logScope.run(request, () => redis.failed('Connection is closed.'));
    expect(under).toEqual(['no request']);
  });

  // A hanging Redis fails each command only at its timeout: after one failure requests use
  // memory at once, and one PING at a time (not one per request) asks whether it answers again.
  it('leaves Redis alone for a rest after a failed command, then asks with one PING at a time', async () => {
    const redis = connect();
    await redis.onModuleInit();
    const client = redis.client!;
    const ping = jest.spyOn(client, 'ping');
    let now = Date.now();
    jest.spyOn(Date, 'now').mockImplementation(() => now);

    redis.failed('Command timed out');
    expect(redis.ready()).toBeNull();
    expect(await redis.problem()).toBe(
      'not used after a failed command: resting, a PING asks again in 2.0 s',
    );
    now += REDIS_REST_MS - 1;
    expect(redis.ready()).toBeNull();
    expect(ping).not.toHaveBeenCalled();

    // The rest is over: the first request's PING goes, unanswered; the others send none.
    ping.mockRejectedValueOnce(new Error('Command timed out'));
    now += 1;
    for (let i = 0; i < 3; i++) expect(redis.ready()).toBeNull();
    expect(ping).toHaveBeenCalledTimes(1);
    await ping.mock.results[0].value.catch(() => undefined);
    // Unanswered: another rest, then another PING, answered this time.
    expect(redis.ready()).toBeNull();
    expect(ping).toHaveBeenCalledTimes(1);
    now += REDIS_REST_MS;
    for (let i = 0; i < 3; i++) expect(redis.ready()).toBeNull();
    expect(ping).toHaveBeenCalledTimes(2);
    await ping.mock.results[1].value;
    expect(redis.ready()).toBe(client);
    expect(await redis.problem()).toBeUndefined();
  });

  // A flood that holds the event loop past the command timeout times commands out that Redis
  // answered at once (an audit's finding): such a timeout does not rest Redis; an error does.
  it('rests Redis after a timeout only when this process did not stall meanwhile', async () => {
    stalls.mockRestore();
    const redis = connect();
    await redis.onModuleInit();
    const end = performance.now() + OWN_STALL_MS + 100;
    while (performance.now() < end) {
      // This process' own stall.
    }
    expect(redis.failed('Command timed out')).toBe(false);
    expect(redis.ready()).toBe(redis.client);
    // A failure other than a timeout is Redis', stall or not.
    expect(redis.failed('Connection is closed.')).toBe(true);
    expect(redis.ready()).toBeNull();

    const calm = connect();
    await calm.onModuleInit();
    expect(calm.failed('Command timed out')).toBe(true);
    expect(calm.ready()).toBeNull();
  });

  // A replica out of rotation is only scraped: its gauge must not say 0 for good after a blip.
  it('ends a rest by being asked why Redis is not used, when no request uses it', async () => {
    const redis = connect();
    await redis.onModuleInit();
    let now = Date.now();
    jest.spyOn(Date, 'now').mockImplementation(() => now);
    redis.failed('Command timed out');
    expect(await redis.problem()).toMatch(/^not used after a failed command: resting/);
    now += REDIS_REST_MS;
    // The rest is over: asking sends the PING and answers from it: Redis is used again.
    expect(await redis.problem()).toBeUndefined();
    expect(redis.ready()).toBe(redis.client);
  });

  // A hang that clears while the replica is idle (out of rotation, only scraped): the first
  // scrape and system-status after the rest said "not used" while the PING they sent was about
  // to be answered. Asking once the rest is over waits for that PING (within a command's bound).
  it(
    'answers from the PING once a hang cleared and the rest is over, and says resting before',
    () =>
      onThrowawayRedis(async (server, redis) => {
        server.pause();
        const started = Date.now();
        await redis.client!.get('key').catch((error: Error) => redis.failed(error.message));
        expect(Date.now() - started).toBeLessThan(REDIS_COMMAND_TIMEOUT_MS + 1000);
        expect(await redis.problem()).toMatch(/^not used after a failed command: resting/);

        // Still hung once the rest is over: the answer waits for the PING, at most a command's
        // bound, and says it went unanswered.
        await sleep(REDIS_REST_MS);
        const asked = Date.now();
        expect(await redis.problem()).toMatch(/PING .*not answered.*resting/);
        expect(Date.now() - asked).toBeLessThan(REDIS_COMMAND_TIMEOUT_MS + 500);

        server.resume();
        await sleep(REDIS_REST_MS + 200);
        expect(await redis.problem()).toBeUndefined();
        expect(redis.ready()).toBe(redis.client);
      }),
    20_000,
  );

  // ioredis retries every few hundred ms: one warning per outage, not one per attempt, and a
  // second outage is told as the first was.
  it('logs each outage once, and that Redis is back after each', async () => {
    const server = await startThrowawayRedis();
    try {
      const warn = jest.mocked(Logger.prototype.warn);
      const log = jest.mocked(Logger.prototype.log);
      const said = (spy: { mock: { calls: unknown[][] } }, text: string) =>
        spy.mock.calls.filter(([message]) => String(message).includes(text)).length;
      const redis = connect(server.url);
      await redis.onModuleInit();
      for (const outage of [1, 2]) {
        await server.stop();
        await until(
          async () => (await redis.problem())?.includes('ECONNREFUSED') || undefined,
          10_000,
        );
        // Some reconnection attempts fail meanwhile.
        await new Promise((resolve) => setTimeout(resolve, 1000));
        expect(said(warn, 'Redis unreachable')).toBe(outage);
        await server.start();
        await until(() => Promise.resolve(redis.ready() ?? undefined), 10_000);
        expect(said(log, 'Redis connected again')).toBe(outage);
      }
    } finally {
      await server.stop();
    }
  }, 30_000);

  it('shares a cached answer between replicas, with its lifetime in Redis', async () => {
    const prefix = testRedisPrefix();
    const [one, two] = [0, 1].map(() => {
      const redis = new RedisConnection({ url: testRedisUrl(), keyPrefix: prefix });
      connections.push(redis);
      return redis;
    });
    await Promise.all([one.onModuleInit(), two.onModuleInit()]);
    await new ResponseCache(one).set('answer', { items: 3 }, 30);
    expect(await new ResponseCache(two).get('answer')).toEqual({ items: 3 });
    const lifetime = await two.client!.pttl('answer');
    expect(lifetime).toBeGreaterThan(0);
    expect(lifetime).toBeLessThanOrEqual(30_000);
    await two.client!.del('answer');
  });
});

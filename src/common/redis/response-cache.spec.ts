import { Logger } from '@nestjs/common';
import { RedisConnection } from './redis-connection';
import { ResponseCache } from './response-cache';

/** A RedisConnection whose client answers `get` with `answer`; records failures reported. */
function fakeRedis(answer: () => Promise<string | null>) {
  const failures: string[] = [];
  const client = { get: answer, set: () => Promise.resolve('OK') };
  const redis = {
    ready: () => client,
    failed: (reason: string) => failures.push(reason),
  } as unknown as RedisConnection;
  return { redis, failures };
}

describe(ResponseCache.name, () => {
  beforeAll(() => jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined));
  afterAll(() => jest.restoreAllMocks());

  it('reads a value that is not JSON as a miss, without resting Redis: Redis answered', async () => {
    const { redis, failures } = fakeRedis(() => Promise.resolve('{not json'));
    await expect(new ResponseCache(redis).get('key')).resolves.toBeUndefined();
    expect(failures).toEqual([]);
  });

  it('rests Redis when the read itself fails', async () => {
    const { redis, failures } = fakeRedis(() => Promise.reject(new Error('Command timed out')));
    await expect(new ResponseCache(redis).get('key')).resolves.toBeUndefined();
    expect(failures).toEqual(['Command timed out']);
  });

  it('reads what it finds', async () => {
    const { redis } = fakeRedis(() => Promise.resolve('{"a":1}'));
    await expect(new ResponseCache(redis).get('key')).resolves.toEqual({ a: 1 });
  });
});

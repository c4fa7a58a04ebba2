import Redis from 'ioredis';

/** Where tests and benchmarks look for a Redis when REDIS_URL is not set. */
export const LOCAL_REDIS_URL = 'redis://127.0.0.1:6379';

/** REDIS_URL (or the local default) when a Redis answers there, else undefined. */
export async function reachableRedisUrl(): Promise<string | undefined> {
  const url = process.env.REDIS_URL ?? LOCAL_REDIS_URL;
  return (await redisProblem(url)) === undefined ? url : undefined;
}

/** Why the Redis at `url` does not answer a PING (within 3 s), or undefined when it does. */
export async function redisProblem(url: string): Promise<string | undefined> {
  const client = new Redis(url, {
    lazyConnect: true,
    connectTimeout: 3000,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  // The connection's own error (ECONNREFUSED), where connect() says only "Connection is closed".
  let cause: Error | undefined;
  client.on('error', (error: Error) => (cause = error));
  try {
    await client.connect();
    await client.ping();
    return undefined;
  } catch (error) {
    return (cause ?? (error as Error)).message;
  } finally {
    client.disconnect();
  }
}

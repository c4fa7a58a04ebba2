import Redis from 'ioredis';
import {
  REDIS_COMMAND_TIMEOUT_MS,
  REDIS_CONNECT_TIMEOUT_MS,
} from '../../common/redis/redis-connection';
import { redisFailureText } from '../../common/redis/redis-failure';
import { ON_DEMAND_CACHE_KEYS } from '../data-query/on-demand-cache-keys';

/**
 * The on-demand answers cached (ResponseCache, QUERY_CACHE_TTL_SECONDS), as an erasure left
 * them: in Redis, every one removed (or counted, for a dry run); in each replica's memory
 * (no REDIS_URL), out of the command's reach; or Redis could not be reached.
 */
export type CachedAnswersOutcome =
  | { outcome: 'redis'; entries: number }
  | { outcome: 'process' }
  | { outcome: 'not-checked'; why: string };

/** Keys looked at per SCAN, and removed per UNLINK: never KEYS, which blocks Redis. */
const SCAN_BATCH = 500;

/**
 * Removes every cached on-demand answer from Redis, the author's among them: a cache key is a
 * hash of the query, so which entries hold the author's posts cannot be told without reading
 * them all, and a miss costs no more than one query to the network. SCAN and UNLINK in batches,
 * never KEYS (which blocks every replica's Redis while it runs). The replicas' own memory (used
 * without REDIS_URL, and while Redis was unreachable) is out of reach: the summary says so.
 */
export async function eraseCachedAnswers(
  redisUrl: string | undefined,
  keyPrefix: string,
  dryRun: boolean,
): Promise<CachedAnswersOutcome> {
  if (!redisUrl) return { outcome: 'process' };
  // No keyPrefix option: ioredis would prefix UNLINK's keys, not SCAN's pattern.
  const client = new Redis(redisUrl, {
    lazyConnect: true,
    maxRetriesPerRequest: 1,
    connectTimeout: REDIS_CONNECT_TIMEOUT_MS,
    // A server that takes the connection and answers nothing held the command for ever, after
    // its database work and before its summary (a review).
    commandTimeout: REDIS_COMMAND_TIMEOUT_MS,
    retryStrategy: () => null,
  });
  client.on('error', () => undefined);
  try {
    await client.connect();
    // Asked again, and awaited: ioredis reports a SELECT the server refuses (a number past its
    // `databases`, a server with database 0 only) as an event and goes on with database 0,
    // where another deployment's answers may be. None for database 0, as the service sends none.
    const db = client.options.db ?? 0;
    if (db !== 0) await client.select(db);
    const pattern = `${keyPrefix.replace(/[*?[\]\\]/g, '\\$&')}${ON_DEMAND_CACHE_KEYS}*`;
    let cursor = '0';
    // A SCAN may return a key twice: a dry run counts each once.
    const seen = new Set<string>();
    let removed = 0;
    do {
      const [next, keys] = await client.scan(cursor, 'MATCH', pattern, 'COUNT', SCAN_BATCH);
      cursor = next;
      if (keys.length === 0) continue;
      if (dryRun) for (const key of keys) seen.add(key);
      else removed += await client.unlink(...keys);
    } while (cursor !== '0');
    return { outcome: 'redis', entries: dryRun ? seen.size : removed };
  } catch (error) {
    return { outcome: 'not-checked', why: redisFailureText(error as Error) };
  } finally {
    client.disconnect();
  }
}

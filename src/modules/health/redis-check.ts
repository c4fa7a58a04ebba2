import { RedisConnection } from '../../common/redis/redis-connection';
import { ComponentStatusDto } from './dto/system-status.dto';
import { timed } from './timed-check';

/**
 * Redis is optional to serving (rate limits and the cache fall back to this process), so an
 * unreachable Redis is `degraded`, never `unhealthy`.
 */
export async function redisStatus(redis: RedisConnection): Promise<ComponentStatusDto> {
  const client = redis.client;
  if (!client) return { status: 'disabled', latency_ms: null };
  const problem = await redis.problem();
  if (problem) return { status: 'degraded', latency_ms: null, error: problem };
  const result = await timed(() => client.ping());
  return result.status === 'healthy' ? result : { ...result, status: 'degraded' };
}

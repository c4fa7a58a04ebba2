import { rateLimitState } from '../../common/throttling/rate-limit-headers';
import type { RateLimitCount } from '../../common/throttling/rate-limit-storage';
import { ApiKeyEntity } from './api-key.entity';
import { ApiKeyUsageDto } from './dto/api-key-detail.dto';
import { ApiKeySummaryDto } from './dto/api-key-summary.dto';

/** A key as listed: never the key, nor its hash. */
export function toSummary(key: ApiKeyEntity): ApiKeySummaryDto {
  return {
    id: key.id,
    name: key.name,
    prefix: key.prefix,
    tier: key.tier,
    created_at: key.createdAt.toISOString(),
    last_used_at: key.lastUsedAt?.toISOString() ?? null,
    is_active: key.isActive,
    deactivated_at: key.deactivatedAt?.toISOString() ?? null,
    expires_at: key.expiresAt?.toISOString() ?? null,
    rate_limit: key.rateLimit,
  };
}

/**
 * A key's budget as its count stands, read as its next request would be counted (the storage's
 * rules, RedisThrottlerStorage): a cool-down holds only while the count is at the limit, since one
 * started under a lower limit ends at the first request under a raised one. The numbers are the
 * rate-limit headers' (rateLimitState), but for a limit lowered under the count: none remain.
 */
export function toUsage(
  limit: number,
  count: RateLimitCount,
  windowSeconds: number,
): ApiKeyUsageDto {
  const rateLimited = count.blockedForSeconds > 0 && count.hits >= limit;
  const state = rateLimitState(
    limit,
    {
      totalHits: count.hits,
      timeToExpire: count.windowEndsInSeconds,
      isBlocked: rateLimited,
      timeToBlockExpire: count.blockedForSeconds,
    },
    windowSeconds,
  );
  return {
    limit,
    window_seconds: windowSeconds,
    used: count.hits,
    remaining: Math.max(0, state.remaining),
    resets_in_seconds: state.resetSeconds,
    rate_limited: rateLimited,
  };
}

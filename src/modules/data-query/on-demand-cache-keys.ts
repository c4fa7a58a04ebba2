/**
 * What every cached on-demand answer's key starts with, after the deployment's prefix
 * (REDIS_KEY_PREFIX): the data query writes them (cacheKey), an author's erasure removes them
 * all (cached-answers.ts).
 */
export const ON_DEMAND_CACHE_KEYS = 'ondemand:';

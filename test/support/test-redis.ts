import { LOCAL_REDIS_URL } from '../../bench/support/redis';

/** The Redis the medium and e2e tiers use. */
export function testRedisUrl(): string {
  return process.env.TEST_REDIS_URL ?? process.env.REDIS_URL ?? LOCAL_REDIS_URL;
}

import type { ApiKeyPrincipal } from '../auth/api-key-principal';
import type { RateLimitSettings } from './rate-limit-settings';

/**
 * Where a key's requests are counted: RateLimitGuard counts them there, and a key's view
 * (`GET /api/v1/keys/{id}`) reads the count back from the same place. The name is the one
 * `@nest-lab/throttler-storage-redis` gave it, so counts survived the change of storage.
 */
export const KEY_BUDGET_SCOPE = 'default';

export function keyBudgetCounter(keyId: string): string {
  return `ratelimit:default:${keyId}`;
}

/** A key's own limit (set by the master key) overrides its class's budget. */
export function keyBudgetOf(
  key: Pick<ApiKeyPrincipal, 'rateLimit' | 'tier'>,
  settings: RateLimitSettings,
): number {
  const { regularPerWindow, validatorPerWindow } = settings;
  return key.rateLimit ?? (key.tier === 'validator' ? validatorPerWindow : regularPerWindow);
}

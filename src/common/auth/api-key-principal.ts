import { ApiKeyTier } from './api-key-tier';
import type { AuthFailure } from './auth-failure';

/** Who made an authenticated request; attached to the request by ApiKeyGuard. */
export interface ApiKeyPrincipal {
  /** Key id, or `master` for the master key. Used as the rate-limit tracker. */
  id: string;
  tier: ApiKeyTier;
  isMaster: boolean;
  /** The key's own budget per rate-limit window; null = its class's. */
  rateLimit: number | null;
}

export interface AuthenticatedRequest {
  apiKey?: ApiKeyPrincipal;
  /** Why ApiKeyGuard answered 401, for the request's line (request-logging.ts). */
  authFailure?: AuthFailure;
  /** The id of a genuine key ApiKeyGuard refused (expired, deactivated), for the same line. */
  refusedKeyId?: string;
}

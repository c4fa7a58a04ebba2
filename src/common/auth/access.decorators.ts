import { applyDecorators, SetMetadata } from '@nestjs/common';
import { ApiSecurity } from '@nestjs/swagger';
import { SkipThrottle } from '@nestjs/throttler';
import { ApiErrorResponses } from '../errors/error-responses';

export const ACCESS_METADATA = 'access';
export type AccessLevel = 'public' | 'key' | 'validator' | 'master' | 'metrics';

export const API_KEY_SECURITY = 'ApiKey';
export const METRICS_TOKEN_SECURITY = 'MetricsToken';

/**
 * Errors any keyed operation can answer: a key not in the cache is looked up in Postgres (503
 * while it is down), and anything may fail unexpectedly (500).
 */
const KEYED = [400, 401, 429, 500, 503];

/** No key needed (documentation only). Everything else needs a key: the guard fails closed. */
export const Public = () => SetMetadata(ACCESS_METADATA, 'public' satisfies AccessLevel);

/** Any active key. Sets both the guard's rule and the Swagger security entry. */
export const RequireKey = () =>
  applyDecorators(
    SetMetadata(ACCESS_METADATA, 'key'),
    ApiSecurity(API_KEY_SECURITY),
    ApiErrorResponses(...KEYED),
  );

/** A validator-class key or the master key; a regular key gets 403. */
export const RequireValidatorKey = () =>
  applyDecorators(
    SetMetadata(ACCESS_METADATA, 'validator'),
    ApiSecurity(API_KEY_SECURITY),
    ApiErrorResponses(...KEYED, 403),
  );

/** Only the master key. */
export const RequireMasterKey = () =>
  applyDecorators(
    SetMetadata(ACCESS_METADATA, 'master'),
    ApiSecurity(API_KEY_SECURITY),
    ApiErrorResponses(...KEYED, 403),
  );

/**
 * The master key, or `Authorization: Bearer <METRICS_TOKEN>` when that is set. Not charged to
 * any key budget: a scraper must never be locked out by (or eat into) the master key's budget.
 */
export const RequireMetricsAccess = () =>
  applyDecorators(
    SetMetadata(ACCESS_METADATA, 'metrics'),
    SkipThrottle(),
    ApiSecurity(API_KEY_SECURITY),
    ApiSecurity(METRICS_TOKEN_SECURITY),
    ApiErrorResponses(...KEYED, 403),
  );

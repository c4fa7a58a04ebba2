import { applyDecorators, SetMetadata } from '@nestjs/common';
import { ApiExtension, ApiSecurity } from '@nestjs/swagger';
import { ApiErrorResponses } from '../errors/error-responses';
import { ERROR_CASES, ErrorCase } from '../errors/error-cases';
import { SkipRateLimit } from '../throttling/rate-limit-storage';

export const ACCESS_METADATA = 'access';
/** Every operation needs a key (or the metrics token); an undecorated route needs any key. */
export type AccessLevel = 'key' | 'validator' | 'master' | 'metrics';

export const API_KEY_SECURITY = 'ApiKey';
export const METRICS_TOKEN_SECURITY = 'MetricsToken';

/**
 * Marks an operation whose requests count against the key's budget: the document's finishing
 * step (common/openapi) documents the rate-limit headers on its responses, then drops the mark.
 */
export const RATE_LIMITED_EXTENSION = 'x-rate-limited';

/** A key-authenticated, rate-limited operation: the guard's rule, security and errors. */
const keyAccess = (access: AccessLevel, ...errors: ErrorCase[]) =>
  applyDecorators(
    SetMetadata(ACCESS_METADATA, access),
    ApiSecurity(API_KEY_SECURITY),
    ApiExtension(RATE_LIMITED_EXTENSION, true),
    ApiErrorResponses(400, 401, 429, ...errors),
  );

/**
 * A key-authenticated operation charged to no budget: no rate-limit headers, and no 429 but an
 * address's lockout after failed authentications.
 */
const unmeteredKeyAccess = (access: AccessLevel, ...errors: ErrorCase[]) =>
  applyDecorators(
    SetMetadata(ACCESS_METADATA, access),
    SkipRateLimit(),
    ApiSecurity(API_KEY_SECURITY),
    ApiErrorResponses(400, 401, ERROR_CASES.tooManyAuthFailures, ...errors),
  );

/** Any active key. Sets both the guard's rule and the Swagger security entry. */
export const RequireKey = () => keyAccess('key');

/** A validator-class key or the master key; a regular key gets 403. */
export const RequireValidatorKey = () => keyAccess('validator', ERROR_CASES.needsValidatorKey);

/**
 * Only the master key. `rateLimited: false` for key administration: deactivating a leaked key is
 * the emergency lever, and must work when the master key's budget is spent (by the incident, or
 * by the scripts that share the key), so those operations are charged to no budget; every other
 * operation keeps the master key's. Other keys get the 403 uncharged there, as on /metrics.
 */
export const RequireMasterKey = ({ rateLimited = true }: { rateLimited?: boolean } = {}) =>
  rateLimited
    ? keyAccess('master', ERROR_CASES.needsMasterKey)
    : unmeteredKeyAccess('master', ERROR_CASES.needsMasterKey);

/**
 * The master key, or `Authorization: Bearer <METRICS_TOKEN>` when that is set. Not charged to
 * any key budget: a scraper must never be locked out by (or eat into) the master key's budget.
 */
export const RequireMetricsAccess = () =>
  applyDecorators(
    SetMetadata(ACCESS_METADATA, 'metrics'),
    SkipRateLimit(),
    ApiSecurity(API_KEY_SECURITY),
    ApiSecurity(METRICS_TOKEN_SECURITY),
    // Not the standard 401s: here a bearer token in Authorization is the metrics token.
    ApiErrorResponses(
      400,
      ERROR_CASES.missingKey,
      ERROR_CASES.invalidKey,
      ERROR_CASES.keyExpired,
      ERROR_CASES.invalidMetricsToken,
      ERROR_CASES.needsMetricsAccess,
      ERROR_CASES.tooManyAuthFailures,
    ),
  );

import { CanActivate, ExecutionContext, ForbiddenException, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Request } from 'express';
import { AppConfig } from '../../config/app-config';
import { InjectConfig } from '../../config/config.module';
import { MAX_PRESENTED_SECRET_LENGTH, secretsEqual } from '../../common/security/api-key-secret';
import { ApiKeysService, Authentication } from './api-keys.service';
import { ACCESS_METADATA, AccessLevel } from '../../common/access/access.decorators';
import { AuthenticatedRequest } from '../../common/auth/api-key-principal';
import { AuthFailure } from '../../common/auth/auth-failure';
import { MetricsService } from '../../common/metrics/metrics.service';
import { AuthFailureLimiter } from './auth-failure-limiter';
import { routeMetadata } from '../../common/route-metadata';
import { ERROR_DETAILS } from '../../common/errors/error-details';
import {
  API_KEY_CHALLENGE,
  AuthenticationRequiredException,
  METRICS_CHALLENGE,
  WRONG_METRICS_TOKEN_CHALLENGE,
} from '../../common/auth/authentication-required';

/**
 * Global guard: every route needs an active key (fail closed: an undecorated route needs any
 * key; the documentation is served outside Nest), or on /metrics the metrics token. Runs before
 * the throttler so the rate limit is charged to the key.
 */
@Injectable()
export class ApiKeyGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly keys: ApiKeysService,
    private readonly failures: AuthFailureLimiter,
    @InjectConfig() private readonly config: AppConfig,
    private readonly metrics: MetricsService,
  ) {}

  /** Synchronous unless the key has to be looked up, or a failure recorded. */
  canActivate(context: ExecutionContext): boolean | Promise<boolean> {
    const access = accessLevelOf(this.reflector, context);

    const request = context.switchToHttp().getRequest<Request & AuthenticatedRequest>();
    const presented = presentedKey(request);
    const missing = typeof presented !== 'string' || presented.length === 0;
    const bearer = access === 'metrics' ? bearerTokenOf(request) : undefined;
    // Before any lookup: a locked-out address costs no database round trip, whatever it sends
    // (but for a key already admitted here, which is not looked up to be recognised). Not when a
    // metrics token comes too: the token is tried first, and a remembered key beside it would
    // let a locked-out address go on trying tokens.
    this.failures.refuseIfLockedOut(
      () => request.ip ?? 'unknown',
      missing || bearer !== undefined ? undefined : presented,
    );
    if (bearer !== undefined) return this.admitMetricsToken(request, bearer);
    if (missing)
      throw this.unauthorized(
        request,
        'missing_key',
        missingKeyDetail(request, access),
        challengeOf(access),
      );

    const authentication =
      presented.length <= MAX_PRESENTED_SECRET_LENGTH ? this.keys.authenticate(presented) : null;
    if (authentication instanceof Promise)
      return this.failures.lookingUp(
        request.ip ?? 'unknown',
        authentication.then((found) => this.admit(request, presented, found, access)),
      );
    if (authentication && 'isMaster' in authentication && authentication.isMaster)
      return this.failures
        .refuseMasterBeyondLimit(request.ip ?? 'unknown')
        .then(() => this.admit(request, presented, authentication, access));
    return this.admit(request, presented, authentication, access);
  }

  private admit(
    request: Request & AuthenticatedRequest,
    presented: string,
    authentication: Authentication,
    access: AccessLevel,
  ): true | Promise<never> {
    if (authentication && 'refused' in authentication) {
      request.refusedKeyId = authentication.id;
      // A genuine key past its expiry guesses nothing: no failure towards the address's lockout.
      if (authentication.refused === 'expired')
        throw this.unauthorized(
          request,
          'expired_key',
          ERROR_DETAILS.keyExpired,
          challengeOf(access),
        );
    }
    if (!authentication || 'refused' in authentication)
      return this.refuse(
        request,
        authentication ? 'deactivated_key' : 'wrong_key',
        ERROR_DETAILS.invalidKey,
        challengeOf(access),
        presented,
      );
    // Not the master key: operator-chosen, it is the one secret a guesser might find.
    if (!authentication.isMaster) this.failures.recordAdmission(authentication.id, presented);
    request.apiKey = authentication;
    return true;
  }

  /**
   * The metrics token decides when one is presented: a wrong one is a failed authentication
   * (counted towards the address's lockout, like a wrong key) whatever key comes beside it.
   * Letting the key decide then answered a valid key's 403, or an expired key's 401, to a wrong
   * token and 200 to the right one: guesses at the token without limit (an audit's finding).
   */
  private admitMetricsToken(
    request: Request & AuthenticatedRequest,
    bearer: string,
  ): true | Promise<never> {
    const token = this.config.metricsToken;
    if (token && bearer.length <= MAX_PRESENTED_SECRET_LENGTH && secretsEqual(bearer, token))
      return true;
    return this.refuse(
      request,
      'wrong_metrics_token',
      ERROR_DETAILS.invalidMetricsToken,
      WRONG_METRICS_TOKEN_CHALLENGE,
    );
  }

  /** A failed authentication: counted towards the address's lockout, then answered 401. */
  private async refuse(
    request: Request & AuthenticatedRequest,
    reason: AuthFailure,
    detail: string,
    challenge: string,
    presentedKey?: string,
  ): Promise<never> {
    // May answer 429 instead (the address's limit reached): then it is no 401, nor counted as one.
    await this.failures.recordFailure(request.ip ?? 'unknown', presentedKey);
    throw this.unauthorized(request, reason, detail, challenge);
  }

  /**
   * A 401, its reason kept for the request's line (request-logging.ts) and counted: the body
   * tells an unknown key from a deactivated one no more than before, the operator's log does.
   */
  private unauthorized(
    request: AuthenticatedRequest,
    reason: AuthFailure,
    detail: string,
    challenge: string,
  ): AuthenticationRequiredException {
    request.authFailure = reason;
    this.metrics.recordAuthFailure(reason);
    return new AuthenticationRequiredException(detail, challenge);
  }
}

/**
 * The Authorization header's bearer token: the scheme's name in any case, then one space or more
 * (RFC 9110 §11.1 and §11.4, `1*SP`). Read after exactly one space, a token sent after two was
 * refused as wrong and counted towards the address's lockout. Spaces alone are no token.
 */
function bearerTokenOf(request: Request): string | undefined {
  return /^Bearer +([^ ].*)$/i.exec(request.headers.authorization ?? '')?.[1];
}

/**
 * A request without X-API-Key but with an Authorization header most likely sent its key as
 * `Bearer <key>`: said so, but on /metrics, where a bearer token is the metrics token.
 */
function missingKeyDetail(request: Request, access: AccessLevel): string {
  return access !== 'metrics' && request.headers.authorization
    ? ERROR_DETAILS.keyInAuthorization
    : ERROR_DETAILS.missingKey;
}

/** How a 401 on a route of this access level says to authenticate (`WWW-Authenticate`). */
function challengeOf(access: AccessLevel): string {
  return access === 'metrics' ? METRICS_CHALLENGE : API_KEY_CHALLENGE;
}

/**
 * Checks the key's privilege for the route. Runs after the throttler, so that a 403 is still
 * an authenticated, counted request carrying the rate-limit headers.
 */
@Injectable()
export class AccessLevelGuard implements CanActivate {
  constructor(private readonly reflector: Reflector) {}

  canActivate(context: ExecutionContext): boolean {
    const access = accessLevelOf(this.reflector, context);
    const principal = context.switchToHttp().getRequest<AuthenticatedRequest>().apiKey;
    // No key on the request: the metrics token admitted it, on the one route that takes it.
    if (!principal) return true;
    if (access === 'master' && !principal.isMaster)
      throw new ForbiddenException(ERROR_DETAILS.needsMasterKey);
    if (access === 'metrics' && !principal.isMaster)
      throw new ForbiddenException(ERROR_DETAILS.needsMetricsAccess);
    if (access === 'validator' && principal.tier !== 'validator') {
      throw new ForbiddenException(ERROR_DETAILS.needsValidatorKey);
    }
    return true;
  }
}

function accessLevelOf(reflector: Reflector, context: ExecutionContext): AccessLevel {
  return routeMetadata<AccessLevel>(reflector, context, ACCESS_METADATA) ?? 'key';
}

/**
 * The X-API-Key header's value; sent more than once (a client's and a proxy's), the first, as the
 * original system (Starlette) reads it. Node joins the copies with ", ", which read as one key
 * was a failed guess towards the address's lockout (an audit's finding). Only a value holding
 * ", " is looked at twice: an issued key never does, a master key may.
 */
function presentedKey(request: Request): string | undefined {
  const joined = request.headers['x-api-key'];
  if (typeof joined !== 'string') return undefined;
  if (!joined.includes(', ')) return joined;
  return request.headersDistinct['x-api-key']?.[0];
}

import {
  CanActivate,
  ExecutionContext,
  ForbiddenException,
  Injectable,
  UnauthorizedException,
} from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Request } from 'express';
import { ApiKeysService } from '../../modules/api-keys/api-keys.service';
import { ACCESS_METADATA, AccessLevel } from './access.decorators';
import { AuthenticatedRequest } from './api-key-principal';
import { AuthFailureLimiter } from './auth-failure-limiter';

/** Longest value we even try to look up; real keys are about 50 characters. */
const MAX_KEY_LENGTH = 256;

/**
 * Global guard: every route needs an active key unless marked @Public() (fail closed). Runs
 * before the throttler so the rate limit is charged to the key.
 */
@Injectable()
export class ApiKeyGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly keys: ApiKeysService,
    private readonly failures: AuthFailureLimiter,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    if (accessLevelOf(this.reflector, context) === 'public') return true;

    const request = context.switchToHttp().getRequest<Request & AuthenticatedRequest>();
    const presented = request.headers['x-api-key'];
    if (typeof presented !== 'string' || presented.length === 0)
      throw new UnauthorizedException('Missing API key');

    const principal =
      presented.length <= MAX_KEY_LENGTH ? await this.keys.authenticate(presented) : null;
    if (!principal) {
      await this.failures.recordFailure(request.ip ?? 'unknown');
      throw new UnauthorizedException('Invalid API key');
    }
    request.apiKey = principal;
    return true;
  }
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
    if (access === 'public' || !principal) return true;
    if (access === 'master' && !principal.isMaster)
      throw new ForbiddenException('This operation requires the master key');
    if (access === 'validator' && principal.tier !== 'validator') {
      throw new ForbiddenException('This operation requires a validator key');
    }
    return true;
  }
}

function accessLevelOf(reflector: Reflector, context: ExecutionContext): AccessLevel {
  return (
    reflector.getAllAndOverride<AccessLevel | undefined>(ACCESS_METADATA, [
      context.getHandler(),
      context.getClass(),
    ]) ?? 'key'
  );
}

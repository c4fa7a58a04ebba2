import { ExecutionContext, HttpException, HttpStatus, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import {
  InjectThrottlerOptions,
  InjectThrottlerStorage,
  ThrottlerGuard,
  ThrottlerLimitDetail,
  type ThrottlerModuleOptions,
  type ThrottlerStorage,
} from '@nestjs/throttler';
import type { Response } from 'express';
import { AuthenticatedRequest } from '../auth/api-key-principal';
import { MetricsService } from '../metrics/metrics.service';
import { ERROR_DETAILS } from '../errors/error-details';

/**
 * Runs after ApiKeyGuard, so it sees the authenticated key: every authenticated request is
 * counted exactly once, against its key. Public routes (docs) carry no key and are skipped.
 */
@Injectable()
export class KeyThrottlerGuard extends ThrottlerGuard {
  constructor(
    @InjectThrottlerOptions() options: ThrottlerModuleOptions,
    @InjectThrottlerStorage() storage: ThrottlerStorage,
    reflector: Reflector,
    private readonly metrics: MetricsService,
  ) {
    super(options, storage, reflector);
  }

  protected override shouldSkip(context: ExecutionContext): Promise<boolean> {
    const request = context.switchToHttp().getRequest<AuthenticatedRequest>();
    return Promise.resolve(!request.apiKey);
  }

  protected override throwThrottlingException(
    context: ExecutionContext,
    limit: ThrottlerLimitDetail,
  ): Promise<void> {
    const key = context.switchToHttp().getRequest<AuthenticatedRequest>().apiKey;
    this.metrics.recordRateLimitRejection(key?.isMaster ? 'master' : (key?.tier ?? 'regular'));
    const response = context.switchToHttp().getResponse<Response>();
    response.setHeader('Retry-After', Math.max(1, limit.timeToBlockExpire));
    response.setHeader('X-RateLimit-Limit', limit.limit);
    response.setHeader('X-RateLimit-Remaining', 0);
    response.setHeader('X-RateLimit-Reset', limit.timeToExpire);
    throw new HttpException({ detail: ERROR_DETAILS.rateLimited }, HttpStatus.TOO_MANY_REQUESTS);
  }
}

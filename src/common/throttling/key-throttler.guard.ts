import { ExecutionContext, HttpException, HttpStatus, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import {
  InjectThrottlerOptions,
  InjectThrottlerStorage,
  ThrottlerGuard,
  ThrottlerLimitDetail,
  type ThrottlerModuleOptions,
  type ThrottlerRequest,
  type ThrottlerStorage,
} from '@nestjs/throttler';
import type { Response } from 'express';
import { AuthenticatedRequest } from '../auth/api-key-principal';
import { MetricsService } from '../metrics/metrics.service';
import { ERROR_DETAILS } from '../errors/error-details';
import { setRateLimitHeaders } from './rate-limit-headers';

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

  /** The library's counting, with our headers (both forms, on admitted and refused requests). */
  protected override async handleRequest(request: ThrottlerRequest): Promise<boolean> {
    const { context, limit, ttl, throttler, blockDuration } = request;
    const name = throttler.name ?? 'default';
    const { req, res } = this.getRequestResponse(context);
    const tracker = await request.getTracker(req, context);
    const key = request.generateKey(context, tracker, name);
    const record = await this.storageService.increment(key, ttl, limit, blockDuration, name);
    setRateLimitHeaders(res as Response, {
      limit,
      remaining: record.isBlocked ? 0 : limit - record.totalHits,
      resetSeconds: record.isBlocked ? Math.max(1, record.timeToBlockExpire) : record.timeToExpire,
      windowSeconds: Math.round(ttl / 1000),
    });
    if (record.isBlocked)
      await this.throwThrottlingException(context, { ...record, limit, ttl, key, tracker });
    return true;
  }

  protected override throwThrottlingException(
    context: ExecutionContext,
    limit: ThrottlerLimitDetail,
  ): Promise<void> {
    const key = context.switchToHttp().getRequest<AuthenticatedRequest>().apiKey;
    this.metrics.recordRateLimitRejection(key?.isMaster ? 'master' : (key?.tier ?? 'regular'));
    const response = context.switchToHttp().getResponse<Response>();
    response.setHeader('Retry-After', Math.max(1, limit.timeToBlockExpire));
    throw new HttpException({ detail: ERROR_DETAILS.rateLimited }, HttpStatus.TOO_MANY_REQUESTS);
  }
}

import { HttpException, HttpStatus, Injectable } from '@nestjs/common';
import { InjectThrottlerStorage, ThrottlerStorage } from '@nestjs/throttler';
import { AppConfig } from '../../config/app-config';
import { InjectConfig } from '../../config/config.module';
import { MetricsService } from '../metrics/metrics.service';

/**
 * Counts failed authentications per client IP in the rate-limit storage (so replicas share
 * it) and answers 429 past the limit, which makes guessing keys pointless.
 */
@Injectable()
export class AuthFailureLimiter {
  constructor(
    @InjectThrottlerStorage() private readonly storage: ThrottlerStorage,
    @InjectConfig() private readonly config: AppConfig,
    private readonly metrics: MetricsService,
  ) {}

  /** Records one failure; throws 429 when this address has failed too often. */
  async recordFailure(ip: string): Promise<void> {
    const { failureLimit, failureWindowSeconds } = this.config.auth;
    const windowMs = failureWindowSeconds * 1000;
    const result = await this.storage.increment(
      `authfail:${ip}`,
      windowMs,
      failureLimit,
      windowMs,
      'auth-failures',
    );
    if (result.isBlocked) {
      this.metrics.recordRateLimitRejection('unauthenticated');
      throw new HttpException(
        { detail: 'Too many failed authentication attempts, try again later' },
        HttpStatus.TOO_MANY_REQUESTS,
      );
    }
  }
}

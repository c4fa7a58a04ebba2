import { HttpException, HttpStatus, Injectable } from '@nestjs/common';
import { LRUCache } from 'lru-cache';
import { AppConfig } from '../../config/app-config';
import { InjectConfig } from '../../config/config.module';
import { MetricsService } from '../../common/metrics/metrics.service';
import { ERROR_DETAILS } from '../../common/errors/error-details';
import {
  InjectRateLimitStorage,
  RateLimitStorage,
} from '../../common/throttling/rate-limit-storage';

/** A 429 that says when to come back (`Retry-After`, set by AllExceptionsFilter). */
export class TooManyAuthFailuresException extends HttpException {
  constructor(readonly retryAfterSeconds: number) {
    super({ detail: ERROR_DETAILS.tooManyAuthFailures }, HttpStatus.TOO_MANY_REQUESTS);
  }
}

/**
 * Counts failed authentications per client IP in the rate-limit storage (so replicas share
 * it) and answers 429 past the limit, which makes guessing keys pointless. A locked-out address
 * is remembered by this process until its lockout ends, so that its requests are answered
 * before any key is looked up: guessing costs the database nothing while locked out. (Another
 * replica learns of the lockout at the address's next failure there.)
 */
@Injectable()
export class AuthFailureLimiter {
  private readonly lockedUntil = new LRUCache<string, number>({ max: 100_000 });

  constructor(
    @InjectRateLimitStorage() private readonly storage: RateLimitStorage,
    @InjectConfig() private readonly config: AppConfig,
    private readonly metrics: MetricsService,
  ) {}

  /**
   * Throws the 429 when this address is locked out (as far as this process knows). Takes the
   * address as a function: working it out (Express reads X-Forwarded-For against the trusted
   * proxies) is skipped while no address is locked out, which is nearly always.
   */
  refuseIfLockedOut(ipOf: () => string): void {
    if (this.lockedUntil.size === 0) return;
    const ip = ipOf();
    const until = this.lockedUntil.get(ip);
    if (until === undefined) return;
    const seconds = Math.ceil((until - Date.now()) / 1000);
    if (seconds <= 0) {
      this.lockedUntil.delete(ip);
      return;
    }
    this.metrics.recordRateLimitRejection('unauthenticated');
    throw new TooManyAuthFailuresException(seconds);
  }

  /** Records one failure; throws 429 when this address has failed too often. */
  async recordFailure(ip: string): Promise<void> {
    const { failureLimit, failureWindowSeconds } = this.config.auth;
    const windowMs = failureWindowSeconds * 1000;
    const result = await this.storage.increment({
      key: `authfail:${ip}`,
      scope: 'auth-failures',
      ttl: windowMs,
      limit: failureLimit,
      blockDuration: windowMs,
    });
    if (result.isBlocked) {
      const seconds = Math.max(1, Math.ceil(result.timeToBlockExpire));
      this.lockedUntil.set(ip, Date.now() + seconds * 1000);
      this.metrics.recordRateLimitRejection('unauthenticated');
      throw new TooManyAuthFailuresException(seconds);
    }
  }
}

import { ServiceUnavailableException } from '@nestjs/common';
import { FIRST_RETRY_MS } from '../retry-delay';

/**
 * Retry-After of a 503 for what the service has not loaded yet (the repository names, the
 * network's aggregate) or cannot reach right now (the chain, the Gravity repository): the
 * first retry of a background load that failed (FIRST_RETRY_MS), so a client comes back about
 * when the service has tried again. Later retries wait longer (doubling), but a client asking
 * every few seconds costs one cheap read, and is served soon after the load succeeds.
 */
export const NOT_READY_RETRY_AFTER_SECONDS = FIRST_RETRY_MS / 1000;

/** A 503 that says when to come back (`Retry-After`, set by AllExceptionsFilter). */
export class RetryLaterException extends ServiceUnavailableException {
  constructor(
    message: string,
    readonly retryAfterSeconds: number = NOT_READY_RETRY_AFTER_SECONDS,
  ) {
    super(message);
  }
}

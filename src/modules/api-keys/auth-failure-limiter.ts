import { hash } from 'node:crypto';
import { HttpException, HttpStatus, Injectable, Logger } from '@nestjs/common';
import { LRUCache } from 'lru-cache';
import { lruCache } from '../../common/lru-cache';
import { AppConfig } from '../../config/app-config';
import { InjectConfig } from '../../config/config.module';
import { MetricsService } from '../../common/metrics/metrics.service';
import { ERROR_DETAILS } from '../../common/errors/error-details';
import { monotonicNow } from '../../common/clock/monotonic';
import {
  InjectRateLimitStorage,
  RateLimitStorage,
} from '../../common/throttling/rate-limit-storage';
import { lockoutAddress } from './lockout-address';

/** A 429 that says when to come back (`Retry-After`, set by AllExceptionsFilter). */
export class TooManyAuthFailuresException extends HttpException {
  constructor(readonly retryAfterSeconds: number) {
    super({ detail: ERROR_DETAILS.tooManyAuthFailures }, HttpStatus.TOO_MANY_REQUESTS);
  }
}

/**
 * Counts failed authentications per client address in the rate-limit storage (so replicas share
 * it) and answers 429 past the limit, which makes guessing keys pointless. An IPv6 client counts
 * by its /64 (lockoutAddress), in the shared count and in every cache here alike: each method
 * takes the client's address as Express gives it and works out what it counts by. A locked-out
 * address is remembered by this process until its lockout ends, so that its requests are
 * answered before any key is looked up: guessing costs the database nothing while locked out.
 * (Another replica learns of the lockout at the address's next failure there, or when the master
 * key is presented there: refuseMasterBeyondLimit.)
 *
 * An issued key this process has admitted before is let through its address's lockout, so that
 * one client's wrong keys do not lock out the working clients behind the same NAT or proxy
 * (docs/decisions.md, "Brute force"). Recognised by its digest, without a lookup: keys never
 * seen here, and the master key, still get the 429.
 */
@Injectable()
export class AuthFailureLimiter {
  private readonly logger = new Logger(AuthFailureLimiter.name);
  /**
   * Until when each address is locked out, on the rate-limit storages' monotonic clock
   * (monotonicNow): a wall clock set back would lengthen the lockout by as much
   * (docs/decisions.md, "Clocks").
   */
  private readonly lockedUntil = lruCache<string, number>(100_000);
  /** Issued keys that authenticated in this process, by digest (to their id), most recent kept. */
  private readonly admittedKeys = lruCache<string, string>(100_000);
  /**
   * The same keys by id (to their digest): a key already admitted is known by its id, so its
   * later requests are not hashed a second time (ApiKeysService hashed it once already).
   */
  private readonly admittedIds = lruCache<string, string>(100_000);
  /**
   * Failures this process saw per address in the current window, counted the moment each is
   * known. The shared count (Redis) answers a round trip later: meanwhile a burst of guesses
   * sent at once was checked whole, well past the limit, before the lockout was known here.
   */
  private readonly recentFailures: LRUCache<string, number>;
  /** Key lookups in flight per address, each settling once its verdict is recorded. */
  private readonly lookups = new Map<string, Set<Promise<unknown>>>();

  constructor(
    @InjectRateLimitStorage() private readonly storage: RateLimitStorage,
    @InjectConfig() private readonly config: AppConfig,
    private readonly metrics: MetricsService,
  ) {
    this.recentFailures = lruCache<string, number>(100_000, {
      ttl: config.auth.failureWindowSeconds * 1000,
      noUpdateTTL: true,
    });
  }

  /**
   * The master key presented: refused as a lockout is while its address has failed as often as
   * the limit allows, counting
   * - the guesses of a burst whose lookups are in flight here: when they could reach the limit,
   *   the master key waits for their verdicts, so that guesses sent at once cannot try it past
   *   the limit. Only failures count: lookups of valid keys in flight (a busy client, a NAT) had
   *   counted too, and refused the operator under load (found by a soak test);
   * - the failures every replica counted (the shared count, one round trip, for master-key
   *   requests only): another replica's lockout reaches this process at the address's next
   *   failure here, and the master key was compared before any (found by an audit of two
   *   replicas: 20 failures on one, then the master key on the other, answered 200).
   * The master key is operator-chosen: the one secret a guesser might find.
   */
  async refuseMasterBeyondLimit(clientAddress: string): Promise<void> {
    const ip = lockoutAddress(clientAddress);
    const { failureLimit, failureWindowSeconds } = this.config.auth;
    const inFlight = this.lookups.get(ip);
    if (inFlight && (this.recentFailures.get(ip) ?? 0) + inFlight.size >= failureLimit)
      await Promise.allSettled([...inFlight]);
    if ((this.recentFailures.get(ip) ?? 0) >= failureLimit) this.refuse(failureWindowSeconds);
    const shared = await this.storage.peek(failureKey(ip), FAILURE_SCOPE);
    const seconds = Math.max(
      shared.blockedForSeconds,
      shared.hits >= failureLimit ? shared.windowEndsInSeconds : 0,
    );
    if (seconds === 0) return;
    this.lockedUntil.set(ip, monotonicNow() + seconds * 1000);
    this.refuse(seconds);
  }

  /**
   * Counts a key lookup of this address in flight until `verdict` settles: the lookup and what
   * follows from it, a failure recorded included.
   */
  lookingUp<T>(clientAddress: string, verdict: Promise<T>): Promise<T> {
    const ip = lockoutAddress(clientAddress);
    let inFlight = this.lookups.get(ip);
    if (!inFlight) this.lookups.set(ip, (inFlight = new Set()));
    const tracked = verdict.finally(() => {
      inFlight.delete(tracked);
      if (inFlight.size === 0 && this.lookups.get(ip) === inFlight) this.lookups.delete(ip);
    });
    inFlight.add(tracked);
    return tracked;
  }

  /**
   * Throws the 429 when this address is locked out (as far as this process knows), unless it
   * presents a key admitted before (`presentedKey`, from X-API-Key). Takes the address as a
   * function: working it out (Express reads X-Forwarded-For against the trusted proxies) is
   * skipped while no address is locked out, which is nearly always.
   */
  refuseIfLockedOut(ipOf: () => string, presentedKey: string | undefined): void {
    if (this.lockedUntil.size === 0) return;
    const ip = lockoutAddress(ipOf());
    const until = this.lockedUntil.get(ip);
    if (until === undefined) return;
    const seconds = Math.ceil((until - monotonicNow()) / 1000);
    if (seconds <= 0) {
      this.lockedUntil.delete(ip);
      return;
    }
    if (presentedKey !== undefined && this.admittedKeys.has(digestOf(presentedKey))) return;
    this.refuse(seconds);
  }

  /** Remembers an issued key that authenticated, to let it through its address's lockouts. */
  recordAdmission(keyId: string, issuedKey: string): void {
    if (this.admittedIds.has(keyId)) return;
    const digest = digestOf(issuedKey);
    this.admittedKeys.set(digest, keyId);
    this.admittedIds.set(keyId, digest);
  }

  /**
   * Records one failure; throws 429 when this address has failed too often. A presented key
   * that fails (deactivated since) is no longer let through lockouts.
   */
  async recordFailure(clientAddress: string, presentedKey?: string): Promise<void> {
    const ip = lockoutAddress(clientAddress);
    if (presentedKey !== undefined && this.admittedKeys.size > 0) {
      const digest = digestOf(presentedKey);
      const keyId = this.admittedKeys.get(digest);
      if (keyId !== undefined) {
        this.admittedKeys.delete(digest);
        this.admittedIds.delete(keyId);
      }
    }
    const { failureLimit, failureWindowSeconds } = this.config.auth;
    const windowMs = failureWindowSeconds * 1000;
    // Known here at once: the next request of a burst meets the lockout without waiting for the
    // shared count. The limit-th failure is still answered 401, every request after it 429.
    const seen = (this.recentFailures.get(ip) ?? 0) + 1;
    this.recentFailures.set(ip, seen);
    if (seen >= failureLimit && !this.lockedUntil.has(ip)) this.lockOut(ip, failureWindowSeconds);
    if (seen > failureLimit) this.refuse(failureWindowSeconds);
    const result = await this.storage.increment({
      key: failureKey(ip),
      scope: FAILURE_SCOPE,
      ttl: windowMs,
      limit: failureLimit,
      blockDuration: windowMs,
    });
    if (result.isBlocked) {
      const seconds = Math.max(1, Math.ceil(result.timeToBlockExpire));
      if (this.lockedUntil.has(ip)) this.lockedUntil.set(ip, monotonicNow() + seconds * 1000);
      else this.lockOut(ip, seconds);
      this.refuse(seconds);
    }
  }

  /**
   * Starts a lockout this process did not know of, and says so once: without a line, operators
   * saw only 429s counted, never which address (or /64) was guessing keys, nor the one to look at
   * when a client behind a NAT or proxy is refused (a review's finding). Once a lockout, not per
   * refused request: a guesser's every request would otherwise be a warning.
   */
  private lockOut(ip: string, seconds: number): void {
    this.lockedUntil.set(ip, monotonicNow() + seconds * 1000);
    this.logger.warn(
      `${ip} locked out for ${seconds} s: ${this.config.auth.failureLimit} failed authentications within ${this.config.auth.failureWindowSeconds} s (AUTH_FAILURE_LIMIT)`,
    );
  }

  /** The lockout's 429, counted. */
  private refuse(retryAfterSeconds: number): never {
    this.metrics.recordRateLimitRejection('unauthenticated');
    throw new TooManyAuthFailuresException(retryAfterSeconds);
  }
}

/** Where an address's failures are counted, shared by every replica. */
const FAILURE_SCOPE = 'auth-failures';
function failureKey(ip: string): string {
  return `authfail:${ip}`;
}

/** What identifies an admitted key here: its SHA-256, never the key itself. */
function digestOf(key: string): string {
  return hash('sha256', key, 'base64');
}

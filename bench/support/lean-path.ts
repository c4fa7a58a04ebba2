import { hash, randomUUID } from 'node:crypto';
import { closeSync, openSync, writeSync } from 'node:fs';
import { hostname } from 'node:os';
import { performance } from 'node:perf_hooks';
import {
  CanActivate,
  ExecutionContext,
  ForbiddenException,
  HttpException,
  HttpStatus,
} from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { NextFunction, Request, Response } from 'express';
import Redis from 'ioredis';
import { Store, storage as requestScope } from 'nestjs-pino/storage';
import { ACCESS_METADATA, AccessLevel } from '../../src/common/access/access.decorators';
import { ERROR_DETAILS } from '../../src/common/errors/error-details';
import { securityHeaders } from '../../src/common/http/security-headers';
import { LOG_BUFFER_BYTES, LOG_FLUSH_MS } from '../../src/common/logging/logging.module';
import { REQUEST_BUCKETS } from '../../src/common/metrics/metrics.service';
import {
  rateLimitState,
  setRateLimitHeaders,
} from '../../src/common/throttling/rate-limit-headers';
import {
  RateLimitRecord,
  RateLimitStorage,
  SKIP_RATE_LIMIT,
} from '../../src/common/throttling/rate-limit-storage';
import { MemoryThrottlerStorage } from '../../src/common/throttling/memory-throttler-storage';
import { RedisThrottlerStorage } from '../../src/common/throttling/redis-throttler-storage';
import { routeMetadata } from '../../src/common/route-metadata';
import { LeastPathSettings, leastPathSettings } from './least-path';

/** The least path's settings, and where the counts are kept. */
export interface LeanPathSettings extends LeastPathSettings {
  /** The Redis holding the counts; none: the service's memory storage. */
  redisUrl: string | undefined;
  /** Names the key's count: replicas given the same id share it. */
  keyId: string;
}

/**
 * Environment for a `--serve-lean-path` child (read back by `leanPathSettings`), beside
 * leastPathEnv's.
 */
export function leanPathEnv(redisUrl: string | undefined, keyId: string): NodeJS.ProcessEnv {
  return { BENCH_LEAN_KEY_ID: keyId, ...(redisUrl ? { BENCH_LEAN_REDIS_URL: redisUrl } : {}) };
}

export function leanPathSettings(): LeanPathSettings {
  const { BENCH_LEAN_REDIS_URL, BENCH_LEAN_KEY_ID } = process.env;
  if (!BENCH_LEAN_KEY_ID) throw new Error('lean path: settings missing');
  return { ...leastPathSettings(), redisUrl: BENCH_LEAN_REDIS_URL, keyId: BENCH_LEAN_KEY_ID };
}

/** One status's answers: a count, and a histogram of their durations (Prometheus' buckets). */
interface StatusTally {
  count: number;
  sumSeconds: number;
  /** Per bucket of REQUEST_BUCKETS, then +Inf: answers at most that long (not cumulative). */
  buckets: Float64Array;
}

export interface LeanPath {
  /** Express middleware, in front of the route. */
  middleware: (request: Request, response: Response, next: NextFunction) => void;
  /** Nest's global guards the key check and count run in (`inGuards`); else none. */
  guards: CanActivate[];
  /** The answers counted so far, per status. */
  tallies: ReadonlyMap<number, StatusTally>;
  /** Writes out the request lines still buffered, closes the log file and the Redis connection. */
  close(): Promise<void>;
}

/** A key the lean path knows: its budget per window. */
interface LeanKey {
  limit: number;
}

/**
 * The request scope's store: what the scope costs is its propagation through every promise of
 * the request, not what it holds.
 */
const REQUEST_SCOPE = {} as Store;

/**
 * The lean path: what issue 14's target counts as the full path, with the least work we found,
 * in one Express middleware in front of the bare Nest route. Beside the least path (least-path.ts:
 * the plainest way, with the service's libraries) it answers a different question: whether any
 * implementation of the target's behaviours fits in 80 % of the bare route. So it does all of
 * them, with the count exact across replicas: the key's SHA-256 looked up in a map; the
 * service's own rate-limit storage (Redis, batched per event-loop turn, as deployed; memory
 * without Redis); a random request id; the service's security and rate-limit headers (the same
 * bytes go out); a count and a duration histogram per status, kept by hand in typed arrays; one
 * JSON line per request in the service's shape, built by hand and written per 4 KiB. Not here,
 * as in the least path: a key read from the database, the secret scanner, handler log lines
 * carrying `req`, Nest guards, answers in the documented shapes.
 *
 * `inGuards`: the same work in the service's structure, which the service keeps for reasons of its
 * own (docs/decisions.md, "The lean path in the service's structure"): the request in the request
 * scope handler log lines take `req` from (nestjs-pino's AsyncLocalStorage), the key check and the
 * count in Nest's global guards, where route metadata says which routes are public or uncounted,
 * and the privilege check as a third guard. It says what that structure costs by itself.
 */
export function leanPath(settings: LeanPathSettings, inGuards = false): LeanPath {
  const keys = new Map<string, LeanKey>([
    [hash('sha256', settings.apiKey), { limit: settings.limit }],
  ]);
  const redis = settings.redisUrl ? new Redis(settings.redisUrl) : undefined;
  const storage: RateLimitStorage = redis
    ? new RedisThrottlerStorage(redis)
    : new MemoryThrottlerStorage();
  const headers = securityHeaders();
  const windowMs = settings.windowSeconds * 1000;
  const tallies = new Map<number, StatusTally>();
  const log = lineWriter(settings.logFile);

  const tally = (status: number, seconds: number): void => {
    let found = tallies.get(status);
    if (!found)
      tallies.set(
        status,
        (found = {
          count: 0,
          sumSeconds: 0,
          buckets: new Float64Array(REQUEST_BUCKETS.length + 1),
        }),
      );
    let bucket = 0;
    while (bucket < REQUEST_BUCKETS.length && seconds > REQUEST_BUCKETS[bucket]) bucket += 1;
    found.buckets[bucket] += 1;
    found.count += 1;
    found.sumSeconds += seconds;
  };

  /** Request id, security headers, and the count, histogram and line once the answer is done. */
  const receive = (request: Request, response: Response): void => {
    const started = performance.now();
    const id = randomUUID();
    response.setHeader('X-Request-Id', id);
    response.on('close', () => {
      const seconds = (performance.now() - started) / 1000;
      const status = response.statusCode;
      tally(status, seconds);
      const ms = Math.round(seconds * 1000);
      const url = JSON.stringify(request.url);
      const msg = JSON.stringify(`${request.method} ${request.url} ${status} ${ms}ms`);
      log.line(
        `"time":${Date.now()},"req":{"id":"${id}","method":"${request.method}","url":${url}},` +
          `"res":{"statusCode":${status}},"responseTime":${ms},"msg":${msg}}`,
      );
    });
    headers(request, response, () => undefined);
  };

  const keyOf = (request: Request): LeanKey | undefined => {
    const presented = request.headers['x-api-key'];
    return typeof presented === 'string' ? keys.get(hash('sha256', presented)) : undefined;
  };

  const countHit = (key: LeanKey): Promise<RateLimitRecord> =>
    storage.increment({
      key: `ratelimit:lean:${settings.keyId}`,
      scope: 'default',
      ttl: windowMs,
      limit: key.limit,
      blockDuration: windowMs,
    });

  /** Sets the rate-limit headers of a counted hit; false (and Retry-After) over the budget. */
  const admitted = (key: LeanKey, record: RateLimitRecord, response: Response): boolean => {
    setRateLimitHeaders(response, rateLimitState(key.limit, record, settings.windowSeconds));
    if (record.isBlocked) response.setHeader('Retry-After', Math.max(1, record.timeToBlockExpire));
    return !record.isBlocked;
  };

  const middleware = inGuards
    ? (request: Request, response: Response, next: NextFunction): void =>
        requestScope.run(REQUEST_SCOPE, () => {
          receive(request, response);
          next();
        })
    : (request: Request, response: Response, next: NextFunction): void => {
        receive(request, response);
        const key = keyOf(request);
        if (!key) {
          response.status(401).json({ detail: ERROR_DETAILS.invalidKey });
          return;
        }
        countHit(key).then((record) => {
          if (admitted(key, record, response)) next();
          else response.status(429).json({ detail: ERROR_DETAILS.rateLimited });
        }, next);
      };

  return {
    middleware,
    guards: inGuards ? leanGuards(keyOf, countHit, admitted) : [],
    tallies,
    close: async () => {
      log.close();
      if (storage instanceof MemoryThrottlerStorage) storage.onApplicationShutdown();
      await redis?.quit();
    },
  };
}

type LeanRequest = Request & { leanKey?: LeanKey };

/**
 * The lean path's key check and count as the service's three global guards do them: each reads
 * the route's metadata (once per route: routeMetadata), the count is a promise, a refusal an
 * exception. The privilege check has nothing to refuse on this route but is asked all the same.
 */
function leanGuards(
  keyOf: (request: Request) => LeanKey | undefined,
  countHit: (key: LeanKey) => Promise<RateLimitRecord>,
  admitted: (key: LeanKey, record: RateLimitRecord, response: Response) => boolean,
): CanActivate[] {
  const reflector = new Reflector();
  const access = (context: ExecutionContext) =>
    routeMetadata<AccessLevel>(reflector, context, ACCESS_METADATA);
  const keyGuard: CanActivate = {
    canActivate(context) {
      // Read as the service's guard reads it; the bench serves no metrics route, which takes a
      // token instead of a key.
      if (access(context) === 'metrics') return true;
      const request = context.switchToHttp().getRequest<LeanRequest>();
      request.leanKey = keyOf(request);
      if (!request.leanKey)
        throw new HttpException({ detail: ERROR_DETAILS.invalidKey }, HttpStatus.UNAUTHORIZED);
      return true;
    },
  };
  const countGuard: CanActivate = {
    canActivate(context) {
      const { leanKey } = context.switchToHttp().getRequest<LeanRequest>();
      if (!leanKey || routeMetadata<boolean>(reflector, context, SKIP_RATE_LIMIT)) return true;
      const response = context.switchToHttp().getResponse<Response>();
      return countHit(leanKey).then((record) => {
        if (admitted(leanKey, record, response)) return true;
        throw new HttpException(
          { detail: ERROR_DETAILS.rateLimited },
          HttpStatus.TOO_MANY_REQUESTS,
        );
      });
    },
  };
  const privilegeGuard: CanActivate = {
    canActivate(context) {
      if (access(context) === 'master') throw new ForbiddenException(ERROR_DETAILS.needsMasterKey);
      return true;
    },
  };
  return [keyGuard, countGuard, privilegeGuard];
}

/**
 * pino's line (level 30: info) by hand: lines buffered and written per 4 KiB or 100 ms, each
 * chunk in one synchronous write, as pino's destination writes the service's.
 */
function lineWriter(file: string): { line(fields: string): void; close(): void } {
  const fd = openSync(file, 'a');
  const prefix = `{"level":30,"pid":${process.pid},"hostname":${JSON.stringify(hostname())},`;
  let buffered = '';
  const flush = (): void => {
    if (buffered.length === 0) return;
    writeSync(fd, buffered);
    buffered = '';
  };
  const timer = setInterval(flush, LOG_FLUSH_MS).unref();
  return {
    line(fields) {
      buffered += `${prefix}${fields}\n`;
      if (buffered.length >= LOG_BUFFER_BYTES) flush();
    },
    close() {
      clearInterval(timer);
      flush();
      closeSync(fd);
    },
  };
}

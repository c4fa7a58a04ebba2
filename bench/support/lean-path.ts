import { hash, randomUUID } from 'node:crypto';
import { closeSync, openSync, writeSync } from 'node:fs';
import { hostname } from 'node:os';
import { performance } from 'node:perf_hooks';
import type { NextFunction, Request, Response } from 'express';
import Redis from 'ioredis';
import { ERROR_DETAILS } from '../../src/common/errors/error-details';
import { securityHeaders } from '../../src/common/http/security-headers';
import { LOG_BUFFER_BYTES, LOG_FLUSH_MS } from '../../src/common/logging/logging.module';
import { REQUEST_BUCKETS } from '../../src/common/metrics/metrics.service';
import {
  rateLimitState,
  setRateLimitHeaders,
} from '../../src/common/throttling/rate-limit-headers';
import type { RateLimitStorage } from '../../src/common/throttling/rate-limit-storage';
import { MemoryThrottlerStorage } from '../../src/common/throttling/memory-throttler-storage';
import { RedisThrottlerStorage } from '../../src/common/throttling/redis-throttler-storage';
import { LeastPathSettings, leastPathSettings } from './least-path';

/** The least path's settings, and where the counts are kept. */
export interface LeanPathSettings extends LeastPathSettings {
  /** The Redis holding the counts; none: the service's memory storage. */
  redisUrl: string | undefined;
  /** Names the key's count: replicas given the same id share it. */
  keyId: string;
}

/** Environment for a `--serve-lean-path` child (read back by `leanPathSettings`), beside leastPathEnv's. */
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
  middleware: (request: Request, response: Response, next: NextFunction) => void;
  /** The answers counted so far, per status. */
  tallies: ReadonlyMap<number, StatusTally>;
  /** Writes out the request lines still buffered, closes the log file and the Redis connection. */
  close(): Promise<void>;
}

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
 */
export function leanPath(settings: LeanPathSettings): LeanPath {
  const keys = new Map([[hash('sha256', settings.apiKey), { limit: settings.limit }]]);
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

  const middleware = (request: Request, response: Response, next: NextFunction): void => {
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
    const presented = request.headers['x-api-key'];
    const known = typeof presented === 'string' ? keys.get(hash('sha256', presented)) : undefined;
    if (!known) {
      response.status(401).json({ detail: ERROR_DETAILS.invalidKey });
      return;
    }
    const hit = {
      key: `ratelimit:lean:${settings.keyId}`,
      scope: 'default',
      ttl: windowMs,
      limit: known.limit,
      blockDuration: windowMs,
    };
    storage.increment(hit).then((record) => {
      setRateLimitHeaders(response, rateLimitState(known.limit, record, settings.windowSeconds));
      if (!record.isBlocked) return next();
      response.setHeader('Retry-After', Math.max(1, record.timeToBlockExpire));
      response.status(429).json({ detail: ERROR_DETAILS.rateLimited });
    }, next);
  };

  return {
    middleware,
    tallies,
    close: async () => {
      log.close();
      if (storage instanceof MemoryThrottlerStorage) storage.onApplicationShutdown();
      await redis?.quit();
    },
  };
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

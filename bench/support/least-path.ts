import { hash, randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { NextFunction, Request, Response } from 'express';
import { destination, pino } from 'pino';
import { Counter, Histogram, Registry } from 'prom-client';
import { ERROR_DETAILS } from '../../src/common/errors/error-details';
import { securityHeaders } from '../../src/common/http/security-headers';
import { LOG_BUFFER_BYTES, LOG_FLUSH_MS } from '../../src/common/logging/logging.module';
import { REQUEST_BUCKETS } from '../../src/common/metrics/metrics.service';
import { setRateLimitHeaders } from '../../src/common/throttling/rate-limit-headers';

/** The key the least path accepts, and where it writes its request lines (see leastPathEnv). */
export interface LeastPathSettings {
  apiKey: string;
  limit: number;
  windowSeconds: number;
  logFile: string;
}

/** Environment for a `--serve-least-path` child (read back by `leastPathSettings`). */
export function leastPathEnv(settings: LeastPathSettings): NodeJS.ProcessEnv {
  return {
    BENCH_LEAST_KEY: settings.apiKey,
    BENCH_LEAST_LIMIT: String(settings.limit),
    BENCH_LEAST_WINDOW_SECONDS: String(settings.windowSeconds),
    BENCH_LEAST_LOG_FILE: settings.logFile,
  };
}

export function leastPathSettings(): LeastPathSettings {
  const { BENCH_LEAST_KEY, BENCH_LEAST_LIMIT, BENCH_LEAST_WINDOW_SECONDS, BENCH_LEAST_LOG_FILE } =
    process.env;
  if (!BENCH_LEAST_KEY || !BENCH_LEAST_LOG_FILE) throw new Error('least path: settings missing');
  return {
    apiKey: BENCH_LEAST_KEY,
    limit: Number(BENCH_LEAST_LIMIT),
    windowSeconds: Number(BENCH_LEAST_WINDOW_SECONDS),
    logFile: BENCH_LEAST_LOG_FILE,
  };
}

export interface LeastPath {
  middleware: (request: Request, response: Response, next: NextFunction) => void;
  /** Where its counter and histogram are. */
  registry: Registry;
  /** Writes out the request lines still buffered and closes the log file. */
  closeLog(): Promise<void>;
}

/**
 * The plainest code that does what issue 14's target counts as the full path, in one Express
 * middleware in front of the bare Nest route: the key's SHA-256 looked up in a map, a fixed
 * window counted in a map, a random request id, the service's security and rate-limit headers
 * (so the same bytes go out), one counter and one histogram observation, and one pino line per
 * request to a buffered file (4 KiB, as the service writes). None of what the service does
 * besides (a key read from the database once, Redis shared across replicas, the secret scanner,
 * log lines of the handler carrying `req`, Nest guards, 401/429 bodies in the documented shape)
 * is here. Each piece is done the plainest way, with the libraries the service uses: the gap
 * between this and the bare route is about what the behaviours cost by themselves (a hand-made
 * log line or one `writeHead` of precomputed headers would save a little more), and the gap
 * between the service and this is what the service's own way of doing them, and what it does
 * besides, costs. The bare route computes an ETag, which neither this nor the service does.
 */
export function leastPath(settings: LeastPathSettings): LeastPath {
  const keys = new Map([[hash('sha256', settings.apiKey), { limit: settings.limit }]]);
  const windows = new Map<string, { count: number; resetsAt: number }>();
  const registry = new Registry();
  const labelNames = ['method', 'route', 'status'] as const;
  const requests = new Counter({
    name: 'requests',
    help: 'requests',
    labelNames,
    registers: [registry],
  });
  const durations = new Histogram({
    name: 'duration',
    help: 'duration',
    labelNames,
    buckets: REQUEST_BUCKETS,
    registers: [registry],
  });
  const file = destination({
    dest: settings.logFile,
    minLength: LOG_BUFFER_BYTES,
    periodicFlush: LOG_FLUSH_MS,
  });
  const lines = pino({ level: 'info' }, file);
  const headers = securityHeaders();
  const windowMs = settings.windowSeconds * 1000;

  const middleware = (request: Request, response: Response, next: NextFunction): void => {
    const started = performance.now();
    const id = randomUUID();
    response.setHeader('X-Request-Id', id);
    response.on('close', () => {
      const seconds = (performance.now() - started) / 1000;
      const labels = {
        method: request.method,
        route: '/api/v1/health',
        status: String(response.statusCode),
      };
      requests.inc(labels);
      durations.observe(labels, seconds);
      const responseTime = Math.round(seconds * 1000);
      const req = { id, method: request.method, url: request.url };
      lines.info(
        { req, res: { statusCode: response.statusCode }, responseTime },
        `${req.method} ${req.url} ${response.statusCode} ${responseTime}ms`,
      );
    });
    headers(request, response, () => undefined);
    const key = request.headers['x-api-key'];
    const digest = typeof key === 'string' ? hash('sha256', key) : '';
    const known = keys.get(digest);
    if (!known) {
      response.status(401).json({ detail: ERROR_DETAILS.invalidKey });
      return;
    }
    const now = Date.now();
    let window = windows.get(digest);
    if (!window || window.resetsAt <= now)
      windows.set(digest, (window = { count: 0, resetsAt: now + windowMs }));
    window.count += 1;
    const state = {
      limit: known.limit,
      remaining: known.limit - window.count,
      resetSeconds: Math.ceil((window.resetsAt - now) / 1000),
      windowSeconds: settings.windowSeconds,
    };
    setRateLimitHeaders(response, state);
    if (window.count > known.limit) {
      response.status(429).json({ detail: ERROR_DETAILS.rateLimited });
      return;
    }
    next();
  };
  return {
    middleware,
    registry,
    closeLog: () =>
      new Promise<void>((resolve, reject) => {
        file.once('close', resolve).once('error', reject);
        file.end();
      }),
  };
}

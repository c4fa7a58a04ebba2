import { performance } from 'node:perf_hooks';
import { Client } from 'pg';
import { DataSource } from 'typeorm';
import type { LabelBytesDto } from '../../src/modules/stats/dto/stats-responses.dto';
import { MinerIndexReadRepository } from '../../src/network/index/miner-index-read.repository';
import { oldestUsefulBucket } from '../../src/network/protocol';
import { SourceId } from '../../src/network/sources';
import { trackUsage, Usage } from './measure';

// bench:stats' endpoints (bench/stats.ts): each one's path, the original's GROUP BY for the same
// answer and how the two are compared, and the timing of both.

/** Untimed requests before the timed ones. */
export const HTTP_WARMUP = 20;
/** The control: the same pipeline (key check, throttler) answering a small cached body. */
export const HEALTH_PATH = '/api/v1/health';

export interface Endpoint {
  name: string;
  path: string;
  /** The original's query over the index, and its parameters. */
  baseline: { sql: string; params: unknown[] };
  /** The service's SQL for the same answer (MinerIndexReadRepository), called in-process. */
  repository: (stats: MinerIndexReadRepository) => Promise<unknown>;
  /** Compares the HTTP answer with the GROUP BY's rows; a problem, or undefined when equal. */
  compare: (body: unknown, rows: Record<string, unknown>[]) => string | undefined;
}

const TOP_SQL = `SELECT l.value, sum(i.content_size_bytes) AS bytes, sum(i.content_size_bytes * m.credibility) AS adj
FROM miner_index i JOIN miners m ON m.uid = i.miner_uid JOIN labels l ON l.id = i.label_id
WHERE i.source = $1 GROUP BY l.value ORDER BY adj DESC LIMIT 1000`;
const AGES_SQL = `SELECT i.time_bucket, sum(i.content_size_bytes) AS bytes, sum(i.content_size_bytes * m.credibility) AS adj
FROM miner_index i JOIN miners m ON m.uid = i.miner_uid
WHERE i.source = $1 GROUP BY i.time_bucket ORDER BY i.time_bucket DESC LIMIT 1000`;
const LABEL_SQL = `SELECT sum(i.content_size_bytes) AS bytes, sum(i.content_size_bytes * m.credibility) AS adj
FROM miner_index i JOIN miners m ON m.uid = i.miner_uid JOIN labels l ON l.id = i.label_id
WHERE l.value = $1`;

/** Equal up to the float rounding of different summation orders (and the API's rounding). */
function close(ours: number, theirs: number, slack: number): boolean {
  return Math.abs(ours - theirs) <= Math.max(slack, 1e-9 * Math.abs(theirs));
}

function compareSeries(
  body: unknown,
  rows: Record<string, unknown>[],
  key: string,
  column: string,
): string | undefined {
  const items = body as Array<Record<string, number | string>>;
  if (!Array.isArray(items)) return 'not a list';
  if (items.length !== rows.length) return `${items.length} items, GROUP BY ${rows.length}`;
  for (const [i, row] of rows.entries()) {
    const item = items[i];
    if (String(item[key]) !== String(row[column])) {
      return `#${i + 1}: ${String(item[key])}, GROUP BY ${String(row[column])}`;
    }
    if (item.content_size_bytes !== Number(row.bytes)) {
      return `#${i + 1} bytes: ${item.content_size_bytes}, GROUP BY ${String(row.bytes)}`;
    }
    if (!close(Number(item.adj_content_size_bytes), Number(row.adj), 1)) {
      return `#${i + 1} adj: ${item.adj_content_size_bytes}, GROUP BY ${String(row.adj)}`;
    }
  }
  return undefined;
}

function compareLabel(body: unknown, rows: Record<string, unknown>[]): string | undefined {
  const answer = body as LabelBytesDto;
  const [row] = rows;
  if (answer.total_bytes !== Number(row?.bytes ?? 0)) {
    return `bytes ${answer.total_bytes}, GROUP BY ${String(row?.bytes)}`;
  }
  if (!close(answer.adj_total_bytes, Number(row?.adj ?? 0), 0.01)) {
    return `adj ${answer.adj_total_bytes}, GROUP BY ${String(row?.adj)}`;
  }
  return undefined;
}

export function endpoints(popular: string, rare: string): Endpoint[] {
  const top = (source: 'x' | 'reddit', id: SourceId): Endpoint => ({
    name: `top labels ${source}`,
    path: `/api/v1/get_top_labels_by_source/${source}`,
    baseline: { sql: TOP_SQL, params: [id] },
    repository: (stats) => stats.topLabels(id, 1000),
    compare: (body, rows) => compareSeries(body, rows, 'label_value', 'value'),
  });
  const ages = (source: 'x' | 'reddit', id: SourceId): Endpoint => ({
    name: `ages ${source}`,
    path: `/api/v1/ages?source=${source}`,
    baseline: { sql: AGES_SQL, params: [id] },
    repository: (stats) => stats.ages(id, oldestUsefulBucket(new Date()), 1000),
    compare: (body, rows) => compareSeries(body, rows, 'time_bucket_id', 'time_bucket'),
  });
  const label = (kind: string, value: string): Endpoint => ({
    name: `bytes by label ${kind} ${value}`,
    path: `/api/v1/get_bytes_by_label?label=${encodeURIComponent(value)}`,
    baseline: { sql: LABEL_SQL, params: [value] },
    repository: (stats) => stats.bytesByLabel(value),
    compare: compareLabel,
  });
  return [
    top('x', 2),
    top('reddit', 1),
    ages('x', 2),
    ages('reddit', 1),
    label('popular', popular),
    label('rare', rare),
  ];
}

/** Timed HTTP answers, with the CPU the service used per request and our own event-loop delay. */
export interface HttpRun {
  times: number[];
  body: unknown;
  /** CPU ms the service process used per timed request (NaN without /proc). */
  appCpuMs: number;
  /** p99 event-loop delay of this process while timing: above a few ms, our clock was late. */
  delayP99: number;
}

/**
 * `count` sequential GETs after HTTP_WARMUP untimed ones; ms per request, body included.
 * `appPid`: the service's process, whose CPU time is read from /proc around the timed requests.
 */
export async function timeHttp(
  url: string,
  apiKey: string,
  count: number,
  appPid: number | undefined,
): Promise<HttpRun> {
  const times: number[] = [];
  let body: unknown;
  let usage: (() => Usage) | undefined;
  let timedStart = 0;
  for (let index = 0; index < HTTP_WARMUP + count; index += 1) {
    if (index === HTTP_WARMUP) {
      usage = trackUsage([appPid]);
      timedStart = performance.now();
    }
    const started = performance.now();
    const response = await fetch(url, { headers: { 'X-API-Key': apiKey } });
    const text = await response.text();
    const ms = performance.now() - started;
    if (response.status !== 200)
      throw new Error(`${url}: ${response.status} ${text.slice(0, 300)}`);
    if (index >= HTTP_WARMUP) times.push(ms);
    body ??= JSON.parse(text);
  }
  const used = usage?.();
  const seconds = (performance.now() - timedStart) / 1000;
  const appCpuMs = ((used?.cpu[0] ?? NaN) * seconds * 1000) / count;
  return { times, body, appCpuMs, delayP99: used?.delayP99 ?? NaN };
}

export async function timeCalls(call: () => Promise<unknown>, count: number): Promise<number[]> {
  const times: number[] = [];
  for (let index = 0; index < HTTP_WARMUP + count; index += 1) {
    const started = performance.now();
    await call();
    if (index >= HTTP_WARMUP) times.push(performance.now() - started);
  }
  return times;
}

/** A DataSource stand-in for MinerIndexReadRepository that remembers its last SQL (for EXPLAIN). */
export function capturing(dataSource: DataSource) {
  const last = { sql: '', params: [] as unknown[] };
  const proxy = {
    query: (sql: string, params: unknown[] = []) => {
      Object.assign(last, { sql, params });
      return dataSource.query(sql, params);
    },
  };
  return { stats: new MinerIndexReadRepository(proxy as unknown as DataSource), last };
}

export async function explain(client: Client, sql: string, params: unknown[]): Promise<string[]> {
  const result = await client.query<{ 'QUERY PLAN': string }>(
    `EXPLAIN (ANALYZE, BUFFERS) ${sql}`,
    params,
  );
  return result.rows.map((row) => row['QUERY PLAN']);
}

export interface EndpointResult {
  endpoint: Endpoint;
  http: HttpRun;
  sql: number[];
  baseline: number[];
  mismatch: string | undefined;
  ourPlan: string[];
  baselinePlan: string[];
}

/** Where and how often bench:stats times an endpoint. */
export interface EndpointTiming {
  /** The service's base URL, an API key of it and its process (for its CPU time). */
  app: { url: string; key: string; pid: number | undefined };
  client: Client;
  /** The repository whose last SQL is EXPLAINed (capturing). */
  captured: ReturnType<typeof capturing>;
  requests: number;
  baselineRuns: number;
}

/**
 * One endpoint: sequential requests over HTTP, the same SQL in-process, both plans, and the
 * original's GROUP BY (EXPLAIN ANALYZE as its warm-up, then `baselineRuns` runs), its rows
 * compared with the HTTP answer.
 */
export async function measureEndpoint(
  endpoint: Endpoint,
  timing: EndpointTiming,
): Promise<EndpointResult> {
  const { app, client, captured, requests, baselineRuns } = timing;
  const http = await timeHttp(`${app.url}${endpoint.path}`, app.key, requests, app.pid);
  const sql = await timeCalls(() => endpoint.repository(captured.stats), requests);
  const ourPlan = await explain(client, captured.last.sql, captured.last.params);
  const baselinePlan = await explain(client, endpoint.baseline.sql, endpoint.baseline.params);
  const baseline: number[] = [];
  let rows: Record<string, unknown>[] = [];
  for (let run = 0; run < baselineRuns; run += 1) {
    const started = performance.now();
    rows = (
      await client.query<Record<string, unknown>>(endpoint.baseline.sql, endpoint.baseline.params)
    ).rows;
    baseline.push(performance.now() - started);
  }
  const mismatch = endpoint.compare(http.body, rows);
  return { endpoint, http, sql, baseline, mismatch, ourPlan, baselinePlan };
}

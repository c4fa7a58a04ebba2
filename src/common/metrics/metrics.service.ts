import { Injectable, Logger, OnModuleInit } from '@nestjs/common';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { AUTH_FAILURES, AuthFailure } from '../auth/auth-failure';
import { within } from '../within';
import {
  ANSWER_DROP_REASONS,
  AnswerDropReason,
  COLLECTION_OUTCOMES,
  CollectionOutcome,
  COMPILE_FAILURE_REASONS,
  CompileFailureReason,
  INDEX_SYNC_RESULTS,
  ITEM_CHECKS,
  ItemCheck,
  JOB_FAILURE_STAGES,
  JobFailureStage,
  KEY_CLASSES,
  KeyClass,
  PUBLICATION_FAILURE_REASONS,
  PUBLICATION_STEPS,
  PublicationFailureReason,
  PublicationStep,
  QUORUM_RESULTS,
  QuorumResult,
} from './metric-labels';

/** How long a scrape waits for one gauge's read (they are read side by side). */
const SCRAPE_READ_TIMEOUT_MS = 2000;

/** Every metric of this service starts with this, the default process metrics included. */
export const METRIC_PREFIX = 'gateway_';
/** Route label of requests that matched no route (unknown paths, static docs assets). */
export const UNMATCHED_ROUTE = 'unmatched';

export type { KeyClass, QuorumResult } from './metric-labels';
/** Where an on-demand answer came from (`meta.origin`) and its `status`: 2 × 2 series. */
export type OnDemandOrigin = 'live' | 'stored';
export type OnDemandStatus = 'success' | 'error';

/** Seconds; an on-demand query may legitimately take up to its 10 s deadline. */
export const REQUEST_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
/**
 * Up to 150 s: an index call may take 120 s and a bucket call 140 s by default
 * (INDEX_FETCH_TIMEOUT_MS, BUCKET_FETCH_TIMEOUT_MS). By synapse only, 14 series each
 * (docs/decisions.md, "Metrics and logs": **Miner call latency by synapse only**).
 */
const MINER_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 150];
const SYNC_BUCKETS = [1, 5, 15, 30, 60, 120, 300, 600, 1200, 3600];

/**
 * The metrics of one app instance, in a registry of its own (not prom-client's global one:
 * tests run several apps in one process). Producers call the small methods below; gauges that
 * need a database read (task states, pool usage) are collected at scrape time by their owners
 * through `gauge`.
 */
@Injectable()
export class MetricsService implements OnModuleInit {
  readonly registry = new Registry();
  private readonly logger = new Logger(MetricsService.name);
  /**
   * The gauges whose read failed since the last scrape's warning, by error message: while
   * Postgres is down every gauge reading it fails the same way, and each logging its own warning
   * made some 7 lines per scrape, all saying the same. A scrape says it once.
   */
  private readonly failedReads = new Map<string, Set<string>>();

  private readonly requests = new Counter({
    name: `${METRIC_PREFIX}http_requests_total`,
    help: 'HTTP requests answered, by method, route template and status code',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [this.registry],
  });
  private readonly requestDuration = new Histogram({
    name: `${METRIC_PREFIX}http_request_duration_seconds`,
    help: 'Time from receiving a request to the end of its response, by method, route template and status code',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: REQUEST_BUCKETS,
    registers: [this.registry],
  });
  private readonly requestsUnanswered = new Counter({
    name: `${METRIC_PREFIX}http_requests_unanswered_total`,
    help: 'Requests whose connection closed before their response was complete (the client gave up, or the answer was cut off), by method and route template',
    labelNames: ['method', 'route'] as const,
    registers: [this.registry],
  });
  private readonly rateLimited = new Counter({
    name: `${METRIC_PREFIX}rate_limit_rejections_total`,
    help: 'Requests answered 429: over a key budget (by key class), or too many failed authentications (unauthenticated)',
    labelNames: ['key_class'] as const,
    registers: [this.registry],
  });
  private readonly minerCallDuration = new Histogram({
    name: `${METRIC_PREFIX}miner_call_duration_seconds`,
    help: 'Duration of calls made to miners (answered or failed), by synapse',
    labelNames: ['endpoint'] as const,
    buckets: MINER_BUCKETS,
    registers: [this.registry],
  });
  private readonly minerCallFailures = new Counter({
    name: `${METRIC_PREFIX}miner_call_failures_total`,
    help: 'Failed miner calls by miner uid, synapse and reason (timeout, http_error, malformed, oversize, wrong_schema, network, circuit_open, busy, not_served, blacklisted, unauthorized, address_refused, shutdown, no_budget: the budget, or the share of it kept for users or the spot checks, has no call left)',
    labelNames: ['miner', 'endpoint', 'reason'] as const,
    registers: [this.registry],
  });
  private readonly quorumOutcomes = new Counter({
    name: `${METRIC_PREFIX}quorum_outcomes_total`,
    help: 'Live OnDemandRequest fan-outs by outcome: quorum reached, partial (some answers, no quorum), no_answer, no_miners (cache hits, joined queries and stored answers make none)',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });
  private readonly onDemandAnswers = new Counter({
    name: `${METRIC_PREFIX}on_demand_answers_total`,
    help: 'On-demand answers made (all HTTP 200), by origin (live: the OnDemandRequest fan-out; stored: miners’ stored data) and status (success, error), cache hits included; one whose client left first is counted too (gateway_http_requests_unanswered_total)',
    labelNames: ['origin', 'status'] as const,
    registers: [this.registry],
  });
  private readonly indexSyncDuration = new Histogram({
    name: `${METRIC_PREFIX}index_sync_duration_seconds`,
    help: 'Duration of miner index syncs run by this instance',
    buckets: SYNC_BUCKETS,
    registers: [this.registry],
  });
  private readonly indexSyncRows = new Counter({
    name: `${METRIC_PREFIX}index_sync_rows_total`,
    help: 'Index rows loaded by miner index syncs',
    registers: [this.registry],
  });
  private readonly indexSyncMiners = new Counter({
    name: `${METRIC_PREFIX}index_sync_miners_total`,
    help: 'Miners handled by index syncs, by result (synced, rejected, failed, skipped: not called, e.g. no budget left)',
    labelNames: ['result'] as const,
    registers: [this.registry],
  });
  private readonly indexSyncLast = new Gauge({
    name: `${METRIC_PREFIX}index_sync_last_completed_timestamp_seconds`,
    help: 'Unix time at which the last index sync of this instance completed',
    registers: [this.registry],
  });

  private readonly publicationAttempts = new Counter({
    name: `${METRIC_PREFIX}desirability_publication_attempts_total`,
    help: 'Attempts to publish this validator’s vote, by step: push (to the Gravity repository), commit (on chain)',
    labelNames: ['step'] as const,
    registers: [this.registry],
  });
  private readonly publicationFailures = new Counter({
    name: `${METRIC_PREFIX}desirability_publication_failures_total`,
    help: 'Publication attempts that did not finish, by step and reason (rate_limited: the chain asked to wait; error)',
    labelNames: ['step', 'reason'] as const,
    registers: [this.registry],
  });

  private readonly compileFailures = new Counter({
    name: `${METRIC_PREFIX}task_compile_failures_total`,
    help: 'Failed attempts to compile a task’s dataset, by reason (disk_full, io, database, conversion, other)',
    labelNames: ['reason'] as const,
    registers: [this.registry],
  });
  private readonly taskCollections = new Counter({
    name: `${METRIC_PREFIX}task_collections_total`,
    help: 'Task collections by outcome (collected, nothing_new, nothing_collected: no miner answered usefully, failed: an error, skipped: nothing to ask for, shutdown)',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });
  private readonly jobFailures = new Counter({
    name: `${METRIC_PREFIX}job_failures_total`,
    help: 'Periodic job attempts of this instance that failed, by job and stage (start: could not start, the lock or its row unreadable; run: the run failed)',
    labelNames: ['job', 'stage'] as const,
    registers: [this.registry],
  });
  private readonly itemsDropped = new Counter({
    name: `${METRIC_PREFIX}miner_items_dropped_total`,
    help: 'Items of miners’ OnDemandRequest answers dropped by the answer checks, by check (malformed, wrong_uri, no_match, duplicate, over_limit)',
    labelNames: ['check'] as const,
    registers: [this.registry],
  });
  private readonly answersDropped = new Counter({
    name: `${METRIC_PREFIX}miner_answers_dropped_total`,
    help: 'Miners’ OnDemandRequest answers that counted for nothing, their items dropped by the answer checks: all_items, most_items (more than half)',
    labelNames: ['reason'] as const,
    registers: [this.registry],
  });

  private readonly authFailures = new Counter({
    name: `${METRIC_PREFIX}auth_failures_total`,
    help: 'Requests answered 401, by reason: missing_key, wrong_key, deactivated_key, expired_key, wrong_metrics_token',
    labelNames: ['reason'] as const,
    registers: [this.registry],
  });

  constructor() {
    // Every series from the start, at 0: an alert on errors sees the first one as a change.
    for (const origin of ['live', 'stored'] as const)
      for (const status of ['success', 'error'] as const)
        this.onDemandAnswers.inc({ origin, status }, 0);
    for (const reason of COMPILE_FAILURE_REASONS) this.compileFailures.inc({ reason }, 0);
    for (const outcome of COLLECTION_OUTCOMES) this.taskCollections.inc({ outcome }, 0);
    for (const check of ITEM_CHECKS) this.itemsDropped.inc({ check }, 0);
    for (const reason of ANSWER_DROP_REASONS) this.answersDropped.inc({ reason }, 0);
    for (const reason of AUTH_FAILURES) this.authFailures.inc({ reason }, 0);
    // The lockout alert's and the quorum's too (a metrics audit: their first event after a
    // start made the series, at 1, which increase() does not see).
    for (const key_class of KEY_CLASSES) this.rateLimited.inc({ key_class }, 0);
    for (const outcome of QUORUM_RESULTS) this.quorumOutcomes.inc({ outcome }, 0);
    for (const result of INDEX_SYNC_RESULTS) this.indexSyncMiners.inc({ result }, 0);
    for (const step of PUBLICATION_STEPS) {
      this.publicationAttempts.inc({ step }, 0);
      for (const reason of PUBLICATION_FAILURE_REASONS)
        this.publicationFailures.inc({ step, reason }, 0);
    }
  }

  onModuleInit(): void {
    // Process metrics: RSS, heap, event loop lag, GC, handles. Not in the constructor, so that
    // unit tests building a MetricsService by hand start no monitors.
    collectDefaultMetrics({ register: this.registry, prefix: METRIC_PREFIX });
  }

  /**
   * The Prometheus text exposition of every metric (runs the scrape-time collectors), and one
   * warning for the gauges that could not be read, if any.
   */
  async scrape(): Promise<string> {
    const text = await this.registry.metrics();
    this.warnFailedReads();
    return text;
  }

  private warnFailedReads(): void {
    if (this.failedReads.size === 0) return;
    let count = 0;
    const why: string[] = [];
    for (const [message, names] of this.failedReads) {
      count += names.size;
      why.push(`${message} (${[...names].join(', ')})`);
    }
    this.failedReads.clear();
    const gauges = count === 1 ? 'gauge' : 'gauges';
    this.logger.warn(
      `could not read ${count} ${gauges}, left at their last values: ${why.join('; ')}`,
    );
  }

  observeRequest(method: string, route: string, status: number, seconds: number): void {
    const labels = { method: methodLabel(method), route, status: String(status) };
    this.requests.inc(labels);
    this.requestDuration.observe(labels, seconds);
  }

  /**
   * A request answered on its connection before the app had it (Node's parser refused it, or a
   * CONNECT): counted with the answered ones, under UNMATCHED_ROUTE. Not in the duration
   * histogram: when such a request began is not known.
   */
  recordAnswerBeforeRouting(method: string, status: number): void {
    this.requests.inc({
      method: methodLabel(method),
      route: UNMATCHED_ROUTE,
      status: String(status),
    });
  }

  /** Not counted with the answered ones: a status never reached the client. */
  recordUnansweredRequest(method: string, route: string): void {
    this.requestsUnanswered.inc({ method: methodLabel(method), route });
  }

  recordRateLimitRejection(keyClass: KeyClass): void {
    this.rateLimited.inc({ key_class: keyClass });
  }

  /**
   * `seconds` is undefined for calls refused before reaching the miner (our bulkhead, an open
   * circuit, no budget, a refused address, the cooldown of a refusal).
   */
  observeMinerCall(
    uid: number,
    endpoint: string,
    seconds: number | undefined,
    failure?: string,
  ): void {
    if (seconds !== undefined) this.minerCallDuration.observe({ endpoint }, seconds);
    if (failure) this.minerCallFailures.inc({ miner: String(uid), endpoint, reason: failure });
  }

  recordQuorumOutcome(outcome: QuorumResult): void {
    this.quorumOutcomes.inc({ outcome });
  }

  recordOnDemandAnswer(origin: OnDemandOrigin, status: OnDemandStatus): void {
    this.onDemandAnswers.inc({ origin, status });
  }

  observeIndexSync(report: {
    seconds: number;
    rows: number;
    synced: number;
    rejected: number;
    failed: number;
    skipped: number;
  }): void {
    this.indexSyncDuration.observe(report.seconds);
    this.indexSyncRows.inc(report.rows);
    for (const result of INDEX_SYNC_RESULTS) this.indexSyncMiners.inc({ result }, report[result]);
    this.indexSyncLast.set(Date.now() / 1000);
  }

  recordCompileFailure(reason: CompileFailureReason): void {
    this.compileFailures.inc({ reason });
  }

  recordTaskCollection(outcome: CollectionOutcome): void {
    this.taskCollections.inc({ outcome });
  }

  /** A job this instance schedules: its failure series, at 0, before any attempt. */
  announceJob(job: string): void {
    for (const stage of JOB_FAILURE_STAGES) this.jobFailures.inc({ job, stage }, 0);
  }

  recordJobFailure(job: string, stage: JobFailureStage): void {
    this.jobFailures.inc({ job, stage });
  }

  /**
   * One miner's answer after the checks: its items dropped by each check, and why it counted for
   * nothing, if it did.
   */
  recordCheckedAnswer(
    droppedBy: Readonly<Record<ItemCheck, number>>,
    dropped: AnswerDropReason | undefined,
  ): void {
    for (const check of ITEM_CHECKS)
      if (droppedBy[check] > 0) this.itemsDropped.inc({ check }, droppedBy[check]);
    if (dropped) this.answersDropped.inc({ reason: dropped });
  }

  recordPublicationAttempt(step: PublicationStep): void {
    this.publicationAttempts.inc({ step });
  }

  recordPublicationFailure(step: PublicationStep, reason: PublicationFailureReason): void {
    this.publicationFailures.inc({ step, reason });
  }

  /**
   * A gauge read at scrape time: `read` returns the value of each label combination. A read
   * that fails (database down) or does not answer within SCRAPE_READ_TIMEOUT_MS (a Postgres
   * that stopped answering without closing its connections) leaves the previous values, so the
   * scrape itself still answers, in time for Prometheus' own timeout (10 s by default), and
   * logs the failure with the others of that scrape.
   */
  gauge<L extends string>(
    name: string,
    help: string,
    labelNames: readonly L[],
    read: () => Promise<{ labels: Partial<Record<L, string>>; value: number }[]>,
  ): void {
    const failedReads = this.failedReads;
    const fullName = `${METRIC_PREFIX}${name}`;
    new Gauge<L>({
      name: fullName,
      help,
      labelNames,
      registers: [this.registry],
      async collect() {
        try {
          const values = await within(read(), SCRAPE_READ_TIMEOUT_MS);
          for (const { labels, value } of values) this.set(labels, value);
        } catch (error) {
          const { message } = error as Error;
          failedReads.set(message, (failedReads.get(message) ?? new Set()).add(fullName));
        }
      },
    });
  }

  recordAuthFailure(reason: AuthFailure): void {
    this.authFailures.inc({ reason });
  }
}

/**
 * The methods counted by name; any other (Node's parser knows 35: PROPFIND, MKCALENDAR, …) is
 * `other`. Each method is a series per route and status, fifteen in the duration histogram, and
 * any client without a key could add a few thousand by trying them all (a metrics audit): none
 * of the others reaches a route here, so their names tell an operator nothing the 404 or 405
 * does not.
 */
const COUNTED_METHODS: ReadonlySet<string> = new Set([
  'GET',
  'HEAD',
  'POST',
  'PUT',
  'PATCH',
  'DELETE',
  'OPTIONS',
  'CONNECT',
]);

function methodLabel(method: string): string {
  return COUNTED_METHODS.has(method) ? method : 'other';
}

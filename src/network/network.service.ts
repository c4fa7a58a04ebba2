import { BeforeApplicationShutdown, Injectable, Logger, OnModuleInit } from '@nestjs/common';
import { AppConfig } from '../config/app-config';
import { InjectConfig } from '../config/config.module';
import { MetricsService, QuorumResult } from '../common/metrics/metrics.service';
import {
  checkAnswer,
  CheckedAnswer,
  credibilityScore,
  isUsableAnswer,
  mergeAnswers,
} from './answer-checks';
import { LatencyTracker } from './latency-tracker';
import { MetagraphService } from './metagraph/metagraph.service';
import { MinerEntity } from './miner.entity';
import { MinerCallError, MinerClient, MinerFailureReason } from './miner-client';
import { rankMinersForQuery } from './miner-selection';
import {
  CredibilityUpdate,
  foldObservation,
  MinerCounts,
  MinersRepository,
} from './miners.repository';
import { checkBucket } from './index/bucket-check';
import { DataEntityBucketId, DataItem, DataSource, OnDemandMinerRequest } from './protocol';
import { compileQuery, QueryMatcher } from './query-matcher';
import { LateResult, QuorumOutcome, runQuorum } from './quorum';

export interface NetworkQuery {
  source: DataSource;
  usernames: string[];
  keywords: string[];
  startDate: Date | null;
  endDate: Date;
  limit: number;
}

export interface NetworkQueryResult {
  items: DataItem[];
  error?: string;
  minersQueried: number;
  minersResponded: number;
  minersFailed: { count: number; reasons: Partial<Record<MinerFailureReason, number>> };
  itemsDroppedInvalid: number;
  consensus: number;
  hedged: number;
  deadlineReached: boolean;
}

/** Hedging delay before the network has enough latency samples to know its own p90. */
const INITIAL_HEDGE_MS = 1000;
/**
 * After the response, stragglers get this long (at least) before their calls are abandoned:
 * late answers still count for credibility, but a hung miner must not hold its connection
 * slots for the whole deadline. An abandoned call counts as a timeout.
 */
const STRAGGLER_GRACE_MS = 1000;
/** How long observations of miners are gathered before they are written in one transaction. */
const CREDIBILITY_FLUSH_MS = 500;
/** Failures that say nothing about the miner (it was not even asked) leave credibility alone. */
const NOT_THE_MINERS_FAULT: ReadonlySet<MinerFailureReason> = new Set(['busy', 'circuit_open']);

/**
 * The miner network's public face: other modules call this, never the repositories or the
 * client. Answers on-demand queries with a hedged quorum fan-out and checks every item.
 */
@Injectable()
export class NetworkService implements OnModuleInit, BeforeApplicationShutdown {
  private readonly logger = new Logger(NetworkService.name);
  private readonly latencies = new LatencyTracker();
  /** Calls still running at shutdown end later; their results are no longer recorded. */
  private shuttingDown = false;
  /** Credibility and state writes made after a response; shutdown waits for them. */
  private readonly pendingWrites = new Set<Promise<void>>();
  private readonly pendingScores = new Map<number, CredibilityUpdate>();
  private flushTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly metagraph: MetagraphService,
    private readonly client: MinerClient,
    private readonly repository: MinersRepository,
    @InjectConfig() private readonly config: AppConfig,
    private readonly metrics: MetricsService,
  ) {}

  onModuleInit(): void {
    this.client.onCircuitChange((uid, open) => this.recordState(uid, open ? 'failing' : 'active'));
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.shuttingDown = true;
    await this.settled();
  }

  /** Resolves once the credibility and state writes made so far are stored. */
  async settled(): Promise<void> {
    this.flushScores();
    while (this.pendingWrites.size > 0) await Promise.all(this.pendingWrites);
  }

  /** Settles once the metagraph has been loaded at start. */
  whenReady(): Promise<void> {
    return this.metagraph.ready;
  }

  /** Stake of each validator (validator permit) in the metagraph, by hotkey. */
  validatorStakes(): Map<string, number> {
    return new Map(
      this.metagraph.validators().map((validator) => [validator.hotkey, validator.stake]),
    );
  }

  countMiners(): Promise<MinerCounts> {
    return this.repository.countMiners();
  }

  /** Miners that can be asked now: serving data and not cut off by an open circuit. */
  availableMiners(): MinerEntity[] {
    return this.metagraph
      .minersServingData()
      .filter((miner) => !this.client.isCircuitOpen(miner.uid));
  }

  async query(query: NetworkQuery): Promise<NetworkQueryResult> {
    const { minersPerQuery, quorum, queryDeadlineMs } = this.config.network;
    const candidates = rankMinersForQuery(this.availableMiners());
    if (candidates.length === 0) {
      this.metrics.recordQuorumOutcome('no_miners');
      return emptyResult('No miners available');
    }

    const matcher = compileQuery({
      ...query,
      start_date: query.startDate,
      end_date: query.endDate,
    });
    const request: OnDemandMinerRequest = {
      source: query.source,
      usernames: query.usernames,
      keywords: query.keywords,
      start_date: query.startDate?.toISOString() ?? null,
      end_date: query.endDate.toISOString(),
      limit: query.limit,
    };
    const hedgeAfterMs = Math.min(this.latencies.quantile(0.9, INITIAL_HEDGE_MS), queryDeadlineMs);
    const stragglers = new AbortController();
    const outcome = await runQuorum(
      { candidates, fanout: minersPerQuery, quorum, deadlineMs: queryDeadlineMs, hedgeAfterMs },
      (miner) => this.ask(miner, request, matcher, stragglers.signal),
      (late) => this.recordLate(late),
    );
    setTimeout(() => stragglers.abort(), Math.max(STRAGGLER_GRACE_MS, 2 * hedgeAfterMs)).unref();
    this.metrics.recordQuorumOutcome(quorumResult(outcome, quorum));
    const merged = mergeAnswers(outcome.answers, query.limit);
    this.recordCredibility(outcome, merged.holders);
    return summarize(outcome, merged.items, merged.consensus);
  }

  /**
   * Fetches one bucket's entities from a miner and checks them against what its index claimed
   * (the check moves its credibility). Undefined when the miner is unavailable or fails.
   */
  async fetchBucket(
    uid: number,
    bucket: DataEntityBucketId,
    claimedBytes: number,
  ): Promise<unknown[] | undefined> {
    const miner = this.availableMiners().find((candidate) => candidate.uid === uid);
    if (!miner) return undefined;
    try {
      const reply = await this.client.call(
        { uid, axonUrl: miner.axonUrl! },
        'GetDataEntityBucket',
        { bucket_id: bucket },
        this.config.network.queryDeadlineMs,
      );
      const check = checkBucket(bucket, claimedBytes, reply.body);
      this.persistScores([{ uid, score: check.score }]);
      const entities = (reply.body as { data_entities?: unknown }).data_entities;
      return Array.isArray(entities) ? entities : undefined;
    } catch (error) {
      const reason = error instanceof MinerCallError ? error.reason : 'network';
      if (!NOT_THE_MINERS_FAULT.has(reason)) this.persistScores([{ uid, score: 0 }]);
      return undefined;
    }
  }

  private async ask(
    miner: MinerEntity,
    request: OnDemandMinerRequest,
    matcher: QueryMatcher,
    signal: AbortSignal,
  ): Promise<CheckedAnswer> {
    const reply = await this.client.call(
      { uid: miner.uid, axonUrl: miner.axonUrl! },
      'OnDemandRequest',
      request,
      this.config.network.queryDeadlineMs,
      signal,
    );
    const data = (reply.body as { data?: unknown } | null)?.data;
    if (!Array.isArray(data))
      throw new MinerCallError('wrong_schema', 'response has no `data` list');
    this.latencies.record(reply.latencyMs);
    if (miner.state === 'failing') this.recordState(miner.uid, 'active');
    return checkAnswer(miner.uid, data, matcher, request.source);
  }

  private recordCredibility(outcome: QuorumOutcome, holders: ReadonlyMap<string, number>): void {
    const scores: { uid: number; score: number }[] = [];
    for (const answer of outcome.answers) {
      const score = credibilityScore(answer, holders);
      if (score !== null) scores.push({ uid: answer.uid, score });
    }
    for (const [uid, reason] of outcome.failures) {
      if (!NOT_THE_MINERS_FAULT.has(reason)) scores.push({ uid, score: 0 });
    }
    this.persistScores(scores);
  }

  /**
   * A straggler's answer still counts for credibility, but without corroboration (the others'
   * holdings are gone by then), so a late honest answer scores at most 0.5.
   */
  private recordLate(late: LateResult): void {
    if ('failure' in late) {
      if (!NOT_THE_MINERS_FAULT.has(late.failure))
        this.persistScores([{ uid: late.uid, score: 0 }]);
      return;
    }
    const score = credibilityScore(late.answer, new Map());
    if (score !== null) this.persistScores([{ uid: late.uid, score }]);
  }

  /** Records observations of miners made elsewhere (index sync, spot checks); null = no news. */
  recordScores(scores: { uid: number; score: number | null }[]): void {
    this.persistScores(
      scores.filter((entry): entry is { uid: number; score: number } => entry.score !== null),
    );
  }

  /**
   * Observations are folded per miner and written together every CREDIBILITY_FLUSH_MS: one
   * transaction for all the queries of that window instead of one per query.
   */
  private persistScores(scores: { uid: number; score: number }[]): void {
    if (scores.length === 0 || this.shuttingDown) return;
    const alpha = this.config.network.credibilityAlpha;
    for (const { uid, score } of scores) {
      this.pendingScores.set(uid, foldObservation(this.pendingScores.get(uid), uid, score, alpha));
    }
    this.flushTimer ??= setTimeout(() => this.flushScores(), CREDIBILITY_FLUSH_MS);
  }

  private flushScores(): void {
    clearTimeout(this.flushTimer);
    this.flushTimer = undefined;
    const updates = [...this.pendingScores.values()];
    this.pendingScores.clear();
    if (updates.length === 0) return;
    this.track(
      this.repository
        .applyCredibilityUpdates(updates)
        .then((values) => this.metagraph.updateCredibility(values))
        .catch((error: Error) =>
          this.logger.warn(`could not record credibility: ${error.message}`),
        ),
    );
  }

  private recordState(uid: number, state: 'active' | 'failing'): void {
    if (this.shuttingDown) return;
    this.metagraph.updateState(uid, state);
    this.track(
      this.repository
        .setState(uid, state)
        .catch((error: Error) =>
          this.logger.warn(`could not record miner state: ${error.message}`),
        ),
    );
  }

  private track(write: Promise<void>): void {
    this.pendingWrites.add(write);
    void write.finally(() => this.pendingWrites.delete(write));
  }
}

function quorumResult(outcome: QuorumOutcome, quorum: number): QuorumResult {
  if (outcome.answers.filter(isUsableAnswer).length >= quorum) return 'quorum';
  return outcome.answers.length > 0 ? 'partial' : 'no_answer';
}

function summarize(
  outcome: QuorumOutcome,
  items: DataItem[],
  consensus: number,
): NetworkQueryResult {
  const reasons: Partial<Record<MinerFailureReason, number>> = {};
  for (const reason of outcome.failures.values()) reasons[reason] = (reasons[reason] ?? 0) + 1;
  // Silent at the deadline is, for this request, a timeout (the call itself ends later).
  if (outcome.deadlineReached && outcome.unanswered.length > 0)
    reasons.timeout = (reasons.timeout ?? 0) + outcome.unanswered.length;
  const noAnswer = outcome.answers.length === 0;
  const error = outcome.deadlineReached
    ? 'No miner answered within the deadline'
    : 'Every queried miner failed';
  return {
    items,
    error: noAnswer ? error : undefined,
    minersQueried: outcome.queried.length,
    minersResponded: outcome.answers.length,
    minersFailed: {
      count: outcome.failures.size + (outcome.deadlineReached ? outcome.unanswered.length : 0),
      reasons,
    },
    itemsDroppedInvalid: outcome.answers.reduce((sum, answer) => sum + answer.dropped, 0),
    consensus,
    hedged: outcome.hedged,
    deadlineReached: outcome.deadlineReached,
  };
}

function emptyResult(error: string): NetworkQueryResult {
  return {
    items: [],
    error,
    minersQueried: 0,
    minersResponded: 0,
    minersFailed: { count: 0, reasons: {} },
    itemsDroppedInvalid: 0,
    consensus: 0,
    hedged: 0,
    deadlineReached: false,
  };
}

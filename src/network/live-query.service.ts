import { Injectable, Logger } from '@nestjs/common';
import { Clock } from '../common/clock/clock';
import { debugEnabled } from '../common/logging/debug-lines';
import { AnswerDropReason } from '../common/metrics/metric-labels';
import { MetricsService } from '../common/metrics/metrics.service';
import { Source } from '../common/source';
import { AppConfig } from '../config/app-config';
import { InjectConfig } from '../config/config.module';
import {
  checkAnswer,
  CheckedAnswer,
  credibilityScore,
  isDroppedWhole,
  isMostlyDropped,
  mergeAnswers,
} from './answer-checks';
import { CredibilityRecorder, MinerScore } from './credibility-recorder';
import { LatencyTracker } from './latency-tracker';
import { MetagraphService } from './metagraph/metagraph.service';
import { ServingMiner } from './miner.entity';
import { rankMinersForQuery } from './miner-selection';
import { NetworkQuery } from './protocol';
import { compileQuery, QueryMatcher } from './query-matcher';
import { emptyResult, NetworkQueryResult } from './query-result';
import { LateResult, QuorumOutcome, runQuorum } from './quorum';
import { onDemandRequestFields, OnDemandRequestFields, readEntityList } from './sn13/messages';
import { CallBudgets, nextCallAt, QueryPurpose } from './transport/call-budgets';
import { MinerClient } from './transport/miner-client';
import { targetOf } from './transport/miner-reply';
import { NOT_SERVED_COOLDOWN_MS } from './transport/miner-refusals';
import { failureScore, isBudgetSpent } from './transport/miner-failures';
import { quorumResult, summarize } from './live-round-result';

/** Hedging delay before the network has enough latency samples to know its own p90. */
const INITIAL_HEDGE_MS = 1000;
/**
 * How long a miner that answered OnDemandRequest is remembered as one that serves it (per
 * process): as long as a 404 keeps a miner from being asked it again (MinerClient's cooldown),
 * so that both sides of what `auto` knows age alike.
 */
export const SERVED_MEMORY_MS = NOT_SERVED_COOLDOWN_MS;

/**
 * A live round's result, and how many of its miners were refused unsent because other queries
 * had spent their budget between the choice and the call (`no_budget` among the result's
 * failures, as the meta counts it): NetworkService's `auto` reads them as left out for budget.
 */
export interface LiveRound {
  result: NetworkQueryResult;
  spentWhenCalled: number;
}

/** The miners with an OnDemandRequest call left, and when a spent one has a call again. */
export interface MinersWithCalls {
  miners: ServingMiner[];
  nextCallAt?: Date;
}

/**
 * The live path of on-demand queries: the OnDemandRequest fan-out to miners as a hedged quorum
 * (quorum.ts), every item checked (answer-checks.ts), each miner's credibility moved by what it
 * answered. NetworkService decides when a query goes live (ON_DEMAND_MODE) and asks this.
 */
@Injectable()
export class LiveQueryService {
  private readonly logger = new Logger(LiveQueryService.name);
  private readonly latencies = new LatencyTracker();
  /** When each miner (by hotkey) last answered OnDemandRequest with a list of entities. */
  private readonly servedOnDemandAt = new Map<string, number>();

  constructor(
    private readonly metagraph: MetagraphService,
    private readonly client: MinerClient,
    private readonly credibility: CredibilityRecorder,
    private readonly budgets: CallBudgets,
    @InjectConfig() private readonly config: AppConfig,
    private readonly metrics: MetricsService,
    private readonly clock: Clock,
  ) {}

  /**
   * The `available` miners that might serve OnDemandRequest: all of them while no miner in the
   * metagraph is refusing it with 404; once some are (`refusedSome`), those seen answering it
   * within SERVED_MEMORY_MS (none: nothing to go live for).
   */
  mightServeOnDemand(available: ServingMiner[]): {
    askable: ServingMiner[];
    refusedSome: boolean;
  } {
    const refusedSome = this.metagraph
      .minersServingData()
      .some((miner) => this.client.refusalOf(miner.hotkey, 'OnDemandRequest') === 'not_served');
    if (!refusedSome) return { askable: available, refusedSome };
    const since = this.clock.now().getTime() - SERVED_MEMORY_MS;
    const askable = available.filter(
      (miner) => (this.servedOnDemandAt.get(miner.hotkey) ?? -Infinity) > since,
    );
    return { askable, refusedSome };
  }

  /**
   * The OnDemandRequest fan-out over `withCallsLeft`, those of the `available` miners with budget.
   */
  async query(
    query: NetworkQuery,
    available: ServingMiner[],
    withCallsLeft: MinersWithCalls,
    purpose: QueryPurpose,
  ): Promise<LiveRound> {
    const { minersPerQuery, quorum, queryDeadlineMs } = this.config.network;
    // Circuits looked at again: `available` was read before the budget read this awaited, during
    // which other queries' calls may have opened some or taken their half-open trial (a task
    // collection then asked only such miners while healthy ones were left: an audit's finding,
    // docs/decisions.md, "Scraping task lifecycle"). runQuorum replaces any opening later.
    const candidates = rankMinersForQuery(
      withCallsLeft.miners.filter((miner) => !this.client.isCircuitOpen(miner)),
    );
    // Told apart from the failures: a round whose answering miners were all out of budget read
    // as every miner failing (docs/decisions.md, "Miners left out for budget are counted").
    const withoutBudget = available.length - withCallsLeft.miners.length;
    if (candidates.length === 0) {
      this.metrics.recordQuorumOutcome('no_miners');
      const result = emptyResult(this.whyNoCandidate(available, withCallsLeft), withoutBudget);
      return { result, spentWhenCalled: 0 };
    }

    const matcher = compileQuery({
      ...query,
      keyword_mode: query.keywordMode,
      start_date: query.startDate,
      end_date: query.endDate,
    });
    const request = onDemandRequestFields(query);
    const hedgeAfterMs = Math.min(this.latencies.quantile(0.9, INITIAL_HEDGE_MS), queryDeadlineMs);
    // Concurrent queries (on any replica) may spend a chosen miner's last calls before its own
    // (an audit's finding: a burst's last queries answered "every queried miner failed").
    const spent = new Set<number>();
    // Who each uid was when asked: a uid re-registered before its answer is another miner.
    const asked = new Map(candidates.map((miner) => [miner.uid, miner.hotkey]));
    // Calls still running at the response go on to their own deadline (docs/decisions.md,
    // "Stragglers are not cancelled"): cut at a grace after the quorum, an honest miner slower
    // than the others was scored as one that timed out (an audit's finding).
    const outcome = await runQuorum(
      { candidates, fanout: minersPerQuery, quorum, deadlineMs: queryDeadlineMs, hedgeAfterMs },
      (miner) =>
        this.ask(miner, request, matcher, query.source, purpose).catch((error: unknown) => {
          if (isBudgetSpent(error)) spent.add(miner.uid);
          throw error;
        }),
      (late) => this.recordLate(late, asked),
    );
    this.metrics.recordQuorumOutcome(quorumResult(outcome, quorum));
    const merged = mergeAnswers(outcome.answers, query.limit, query.newestFirst);
    this.recordCredibility(outcome, merged.holders, asked);
    const spentWhenCalled = [...spent].filter((uid) => outcome.failures.has(uid)).length;
    return { result: summarize(outcome, merged, query.limit, withoutBudget), spentWhenCalled };
  }

  /**
   * Why no miner of `available` could be asked: every one has spent its budget, or those with
   * calls left had their circuits opened since they were chosen (the answer said they had all
   * spent the budget), or none was available at all.
   */
  private whyNoCandidate(available: ServingMiner[], withCallsLeft: MinersWithCalls): string {
    if (available.length === 0) return this.whyNoMiners();
    const spent = available.length - withCallsLeft.miners.length;
    // When to come back: "for the hour" alone had clients retry at once, or wait an hour.
    const next = withCallsLeft.nextCallAt;
    const when = next ? `; the first call frees up at ${next.toISOString()}` : '';
    const budget = `this validator's OnDemandRequest budget for the hour (MINER_CALL_BUDGETS)${when}`;
    if (withCallsLeft.miners.length === 0)
      return `No miners available: ${available.length === 1 ? 'the only one has' : `all ${available.length} have`} spent ${budget}`;
    const left = withCallsLeft.miners.length;
    const failing = `the ${left} with calls left ${left === 1 ? 'is' : 'are'} failing (circuit open)`;
    if (spent === 0) return `No miners available: ${failing}`;
    return `No miners available: ${failing}; ${spent} ${spent === 1 ? 'has' : 'have'} spent ${budget}`;
  }

  private async ask(
    miner: ServingMiner,
    request: OnDemandRequestFields,
    matcher: QueryMatcher,
    source: Source,
    purpose: QueryPurpose,
  ): Promise<CheckedAnswer> {
    const reply = await this.client.call(
      targetOf(miner),
      'OnDemandRequest',
      { ...request },
      this.config.network.queryDeadlineMs,
      purpose,
    );
    // A body without the list throws WrongAnswerError: the miner's wrong_schema.
    const entities = reply.read((body) => readEntityList(body, 'data'));
    this.servedOnDemandAt.set(miner.hotkey, this.clock.now().getTime());
    this.latencies.record(reply.latencyMs);
    const checked = checkAnswer(miner, entities, matcher, source, request.limit);
    this.metrics.recordCheckedAnswer(checked.droppedBy, droppedAs(checked));
    return checked;
  }

  /**
   * The miners with an OnDemandRequest call left in their budget (all of them without one): a
   * miner without would only be a `no_budget` failure taking a place among the query's miners.
   * A task's query sees only what is left above the users' reserve.
   */
  async withBudgetLeft(miners: ServingMiner[], purpose: QueryPurpose): Promise<MinersWithCalls> {
    if (!this.budgets.budgetOf('OnDemandRequest') || miners.length === 0) return { miners };
    const left = await this.budgets.left(
      miners.map((miner) => miner.hotkey),
      'OnDemandRequest',
      purpose,
    );
    const withCalls = miners.filter((miner) => left.get(miner.hotkey)!.left > 0);
    const spent = miners.filter((miner) => left.get(miner.hotkey)!.left <= 0);
    const next = nextCallAt(spent.map((miner) => left.get(miner.hotkey)!));
    // MinerClient's own line for a call its budget refuses is never reached by these: one line
    // for the miners left out (a log audit found none at any level).
    if (spent.length > 0 && debugEnabled())
      this.logger.debug(
        {
          synapse: 'OnDemandRequest',
          purpose,
          uids: spent.map(({ uid }) => uid),
          free_at: next?.toISOString() ?? null,
        },
        `${spent.length} of ${miners.length} miners OnDemandRequest: not called, no call left in ` +
          `their budget${purpose === 'task' ? " beyond users' reserve" : ''}`,
      );
    return { miners: withCalls, nextCallAt: next };
  }

  /**
   * Says plainly why no miner can be asked, above all when none serves on-demand queries: each
   * serving miner refused OnDemandRequest recently or is failing (its circuit open). The refused
   * ones alone were named, and with every circuit open nothing was (an error texts audit).
   */
  private whyNoMiners(): string {
    const serving = this.metagraph.minersServingData().map((miner) => ({
      miner,
      refusal: this.client.refusalOf(miner.hotkey, 'OnDemandRequest'),
    }));
    const refusals = serving.flatMap(({ refusal }) => (refusal === undefined ? [] : [refusal]));
    const calls = this.metagraph.minerCalls();
    // The public words: the detail names the metagraph's file or node (system-status').
    if (!calls.allowed) return `No miners available: ${calls.why}`;
    const notServed = refusals.every((reason) => reason === 'not_served');
    if (refusals.length > 0 && refusals.length === serving.length && notServed)
      return (
        `No available miner serves on-demand queries: ${serving.length === 1 ? 'the only one' : `all ${serving.length}`} answered 404 to ` +
        'OnDemandRequest (public subnet 13 miners stopped serving it in December 2025)'
      );
    const failing = serving.flatMap(({ miner, refusal }) =>
      refusal === undefined && this.client.isCircuitOpen(miner) ? [miner] : [],
    );
    const of = `of ${serving.length}`;
    const reasons = [
      failing.length > 0
        ? `${failing.length} ${of} failing (circuit open${firstCooldownEnd(failing)})`
        : '',
      refusals.length > 0
        ? `${refusals.length} ${of} refused OnDemandRequest recently (404: not served, 403: blacklisted, 401: unverified)`
        : '',
    ].filter((reason) => reason !== '');
    return reasons.length === 0
      ? 'No miners available'
      : `No miners available: ${reasons.join('; ')}`;
  }

  private recordCredibility(
    outcome: QuorumOutcome,
    holders: ReadonlyMap<string, number>,
    asked: ReadonlyMap<number, string>,
  ): void {
    const scores: MinerScore[] = [];
    const miner = (uid: number) => ({ uid, hotkey: asked.get(uid) ?? '' });
    for (const answer of outcome.answers)
      scores.push({ ...miner(answer.uid), score: credibilityScore(answer, holders) });
    for (const [uid, reason] of outcome.failures)
      scores.push({ ...miner(uid), score: failureScore(reason) });
    this.credibility.record(scores);
  }

  /**
   * A straggler's answer still counts for credibility, but without corroboration (the others'
   * holdings are gone by then), so a late honest answer scores at most 0.5.
   */
  private recordLate(late: LateResult, asked: ReadonlyMap<number, string>): void {
    const score =
      'failure' in late ? failureScore(late.failure) : credibilityScore(late.answer, new Map());
    this.credibility.record([{ uid: late.uid, hotkey: asked.get(late.uid) ?? '', score }]);
  }
}

/** Why an answer counts for nothing (quorum.ts replaces it), if it does: its items dropped. */
function droppedAs(answer: CheckedAnswer): AnswerDropReason | undefined {
  if (isDroppedWhole(answer)) return 'all_items';
  return isMostlyDropped(answer) ? 'most_items' : undefined;
}

/** `; the first cooldown ends at …` of failing miners, when their states say it (else nothing). */
function firstCooldownEnd(failing: readonly ServingMiner[]): string {
  const ends = failing
    .map((miner) => miner.failingUntil?.getTime())
    .filter((end): end is number => end !== undefined && end > Date.now());
  return ends.length > 0
    ? `; the first cooldown ends at ${new Date(Math.min(...ends)).toISOString()}`
    : '';
}

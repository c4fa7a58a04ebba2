import { AppConfig } from '../config/app-config';
import { SynapseName } from '../common/synapse-names';
import { AnswerPathLog } from './answer-path-log';
import { MinerIndexService } from './index/miner-index.service';
import { LiveQueryService } from './live-query.service';
import { ServingMiner } from './miner.entity';
import { IndexFreshness } from './network-status';
import { NetworkQuery } from './protocol';
import { NetworkQueryResult } from './query-result';
import {
  indexNotLoaded,
  indexUnusable,
  partialAndEmpty,
  StoredBecause,
} from './stored/empty-answers';
import { StoredDataService } from './stored/stored-data.service';
import { QueryPurpose } from './transport/call-budgets';

/**
 * The on-demand half of NetworkService: which way a query is answered (live by the miners, or
 * from their stored data) and the answer from stored data. Built by NetworkService from its own
 * collaborators, not a provider: the network's public service stays the one door.
 */
export class OnDemandAnswers {
  private readonly answerPaths = new AnswerPathLog();

  constructor(
    private readonly config: AppConfig,
    private readonly live: LiveQueryService,
    private readonly storedData: StoredDataService,
    private readonly index: MinerIndexService,
    /** NetworkService.availableMiners. */
    private readonly availableMiners: (synapse: SynapseName) => ServingMiner[],
  ) {}

  /**
   * Answers an on-demand query as ON_DEMAND_MODE says: `live` by the OnDemandRequest fan-out,
   * `stored` from miners' stored data, `auto` live while a miner might serve OnDemandRequest and
   * from stored data otherwise. In `auto` (docs/decisions.md, "On-demand from stored data"):
   * - while no miner has refused OnDemandRequest with 404, every available miner might serve it
   *   (the devnet's case): live;
   * - once some have (a 404 keeps a miner from being asked again for an hour), only the
   *   available miners seen answering OnDemandRequest in the last hour (SERVED_MEMORY_MS, per
   *   process) might: live with those alone, and with none, from stored data at once, rather
   *   than waiting out the timeouts of miners that are dead or never served it;
   * - a live round in which no miner answered and at least one answered 404 (or, once some
   *   have, one in which none of the miners seen serving answered) is answered again from stored
   *   data, whatever the other miners' failures (the real network always has unreachable miners);
   * - while every miner that might serve it has spent this validator's OnDemandRequest budget
   *   for the hour, from stored data (it has budgets of its own); and so is a live round in
   *   which no miner answered while some were left out for want of budget, before the round
   *   or when their turn came (other queries had spent their last calls): the miners asked
   *   were the failing ones;
   * - with no miner to ask at all (none registered, none reachable, and no 404 seen), the live
   *   path's error: an empty stored answer would hide it.
   * A stored answer after a live round has what is left of QUERY_DEADLINE_MS, so that a silent
   * miner never holds a response beyond it (the stored fetches it cannot wait for go on, their
   * items kept for the next query).
   * A `task`'s query (a scraping task's collection) calls a miner only while more than the
   * users' reserve of its budget is left (TASK_BUDGET_RESERVE): users' queries come first.
   */
  async answer(query: NetworkQuery, purpose: QueryPurpose): Promise<NetworkQueryResult> {
    const started = performance.now();
    const mode = this.config.network.onDemandMode;
    if (mode === 'stored') return this.queryStored(query, purpose, 'configured');
    const available = this.availableMiners('OnDemandRequest');
    const { askable, refusedSome } =
      mode === 'auto'
        ? this.live.mightServeOnDemand(available)
        : { askable: available, refusedSome: false };
    if (refusedSome && askable.length === 0) return this.queryStored(query, purpose, 'refused');
    const withCallsLeft = await this.live.withBudgetLeft(askable, purpose);
    if (mode === 'auto' && askable.length > 0 && withCallsLeft.miners.length === 0)
      return this.queryStored(
        query,
        purpose,
        'budget',
        undefined,
        askable.length,
        withCallsLeft.nextCallAt,
      );
    const round = await this.live.query(query, askable, withCallsLeft, purpose);
    const live = round.result;
    if (mode !== 'auto') return live;
    if (live.minersResponded > 0) return this.answeredLive(live, purpose);
    // Those whose budget other queries spent between their choice and their call were left out
    // for budget too (the stored answer does not count them among its queried miners).
    const withoutBudget = live.minersWithoutBudget + round.spentWhenCalled;
    const why: StoredBecause | undefined =
      refusedSome || (live.minersFailed.reasons.not_served ?? 0) > 0
        ? 'refused'
        : withoutBudget > 0
          ? 'budget'
          : undefined;
    if (why === undefined) return this.answeredLive(live, purpose);
    const left = this.config.network.queryDeadlineMs - (performance.now() - started);
    return this.queryStored(
      query,
      purpose,
      why,
      Math.max(0, left),
      withoutBudget,
      withCallsLeft.nextCallAt,
    );
  }

  /** A live answer under ON_DEMAND_MODE=auto, its path noted (AnswerPathLog). */
  private answeredLive(result: NetworkQueryResult, purpose: QueryPurpose): NetworkQueryResult {
    if (purpose === 'user') this.answerPaths.note('live');
    return result;
  }

  /**
   * `minersWithoutBudget`: those the live round considered left out for budget, if any; `freeAt`:
   * when the first of their calls frees up.
   */
  private async queryStored(
    query: NetworkQuery,
    purpose: QueryPurpose,
    why: StoredBecause,
    deadlineMs = this.config.network.queryDeadlineMs,
    minersWithoutBudget = 0,
    /** When the first budget call of the miners left out frees up (for `budget`). */
    freeAt?: Date,
  ): Promise<NetworkQueryResult> {
    if (purpose === 'user') this.answerPaths.note(why);
    const answer = await this.storedData.answer(query, purpose, deadlineMs);
    const { miners } = answer;
    // Nothing found where nothing could be fetched is not "no data": say so to a user, rather
    // than a success with `no_data_available` that clients of the hosted API read as "none
    // exists". A task's collection is an empty one, counted as such (an error would have the
    // task retried at every tick, ahead of the others).
    // The same when the labels' holders are unknown because no miner's index is loaded. A
    // labelled answer is partial for other reasons too (buckets missing, a holder's copy unread,
    // a range before the horizon), but it looked: "names no label" would be untrue.
    const unlooked =
      purpose !== 'user' || answer.items.length > 0
        ? undefined
        : !answer.indexLoaded
          ? await this.noIndexToUse()
          : !answer.namesLabels
            ? partialAndEmpty(why, freeAt)
            : undefined;
    return {
      origin: 'stored',
      items: answer.items,
      error: answer.error ?? unlooked,
      minersQueried: miners.queried,
      minersResponded: miners.responded,
      minersEmpty: miners.empty,
      minersPassedChecks: miners.passedChecks,
      minersFailed: miners.failed,
      minersWithoutBudget,
      itemsDroppedInvalid: answer.itemsDroppedInvalid,
      consensus: answer.consensus,
      hedged: 0,
      deadlineReached: answer.deadlineReached,
      stored: {
        coverage: answer.coverage,
        buckets: answer.buckets,
        oldestFetchedAt: answer.oldestFetchedAt,
      },
    };
  }
  /**
   * Why a user's labelled stored answer could look up no holder: no index is loaded, or every
   * miner holding one may not be asked now (failing, refused, …: system-status' `miner_index`
   * tells them apart in the same words). Read only on this answer's path; unread, the first.
   */
  private async noIndexToUse(): Promise<string> {
    let freshness: IndexFreshness | undefined;
    try {
      freshness = await this.index.indexFreshness();
    } catch {
      freshness = undefined; // the database's trouble shows elsewhere: the plain answer stands
    }
    return freshness && freshness.loaded > 0 && freshness.usable === 0
      ? indexUnusable(freshness)
      : indexNotLoaded(this.config.network.indexSync, freshness?.lastReadAt ?? null);
  }
}

import { Injectable, OnModuleInit } from '@nestjs/common';
import { AppConfig } from '../config/app-config';
import { InjectConfig } from '../config/config.module';
import { BucketReader, HOLDERS_CONSIDERED } from './buckets/bucket-reader';
import { BucketAnswer, FetchOutcome } from './buckets/bucket-outcomes';
import { CredibilityRecorder } from './credibility-recorder';
import { ErasedAuthorsRepository } from './erased-authors.repository';
import { IndexRow, InvalidIndexError, parseCompressedIndex } from './index/compressed-index';
import { IndexFreshness, HotkeyCheck, MinerCalls, MinerCounts } from './network-status';
import { OnDemandAnswers } from './on-demand-answers';
import { MinerIndexService } from './index/miner-index.service';
import { LiveQueryService } from './live-query.service';
import { MetagraphService } from './metagraph/metagraph.service';
import { MinerEntity, ServingMiner } from './miner.entity';
import { MinersRepository } from './miners.repository';
import { BucketKey, DataItem, NetworkQuery } from './protocol';
import { NetworkQueryResult } from './query-result';
import { SourceId, toSourceId } from './sources';
import { getMinerIndexFields, readCompressedIndex, WrongAnswerError } from './sn13/messages';
import { SYNAPSE_NAMES, SynapseName } from '../common/synapse-names';
import { StoredDataService } from './stored/stored-data.service';
import { CallBudgets, QueryPurpose } from './transport/call-budgets';
import { NeuronListing, neuronListing } from './neuron-listing';
import { MinerClient } from './transport/miner-client';
import { targetOf } from './transport/miner-reply';
import { failureScore, MinerCallError, NOT_THE_MINERS_FAULT } from './transport/miner-failures';

/**
 * What is left of one synapse's budget over the miners serving data (NetworkService.budgetsLeft).
 */
export interface SynapseBudgetLeft {
  synapse: SynapseName;
  callsLeft: number;
  minersWithoutCalls: number;
}

/**
 * The miner network's public face: other modules call this, never the repositories or the
 * client. Answers on-demand queries live (LiveQueryService: a hedged quorum fan-out, every item
 * checked) or from miners' stored data (StoredDataService), as ON_DEMAND_MODE says.
 */
@Injectable()
export class NetworkService implements OnModuleInit {
  private readonly onDemand: OnDemandAnswers;

  constructor(
    private readonly metagraph: MetagraphService,
    private readonly client: MinerClient,
    private readonly repository: MinersRepository,
    private readonly credibility: CredibilityRecorder,
    private readonly buckets: BucketReader,
    private readonly budgets: CallBudgets,
    @InjectConfig() private readonly config: AppConfig,
    private readonly storedData: StoredDataService,
    private readonly live: LiveQueryService,
    private readonly index: MinerIndexService,
    private readonly erasedAuthors: ErasedAuthorsRepository,
  ) {
    this.onDemand = new OnDemandAnswers(config, live, storedData, index, (synapse) =>
      this.availableMiners(synapse),
    );
  }

  onModuleInit(): void {
    // A miner answering is active again whoever recorded it failing (another replica's circuit,
    // or this one's before a restart); written only when it was, not at every answer.
    this.client.onCircuitChange((miner, open) => {
      if (open) this.credibility.recordState(miner, 'failing');
      else if (this.metagraph.stateOf(miner) === 'failing')
        this.credibility.recordState(miner, 'active');
    });
    this.client.onAddressRefused((miner) => this.credibility.recordState(miner, 'address_refused'));
    this.budgets.setCheckedNetwork(() =>
      this.availableMiners('GetDataEntityBucket').map((miner) => miner.hotkey),
    );
  }

  /** Resolves once the credibility and state writes made so far are stored. */
  settled(): Promise<void> {
    return this.credibility.settled();
  }

  /** Settles once the metagraph has been loaded at start. */
  whenReady(): Promise<void> {
    return this.metagraph.ready;
  }

  /**
   * Stake of each validator (permit and VALIDATOR_MIN_STAKE) in the metagraph, by hotkey (null:
   * unknown), in uid order: only they vote, as in the subnet's Gravity (data-universe
   * `get_validator_data`, which lists them in that order).
   */
  validatorStakes(): Map<string, number | null> {
    return new Map(
      this.metagraph.validators().map((validator) => [validator.hotkey, validator.stake]),
    );
  }

  /** From the metagraph in memory (MetagraphService.counts): no database read. */
  countMiners(): MinerCounts {
    return this.metagraph.counts();
  }

  /** Whether this gateway's hotkey is a validator in the metagraph in use (null: none loaded). */
  hotkeyCheck(): HotkeyCheck | null {
    return this.metagraph.hotkeyCheck();
  }

  /** Where the metagraph comes from, how the latest read went, and what is stored. */
  metagraphStatus(): ReturnType<MetagraphService['status']> {
    return this.metagraph.status();
  }

  /** Whether miners may be called now, and if not why (MetagraphService.minerCalls). */
  minerCalls(): MinerCalls {
    return this.metagraph.minerCalls();
  }

  /** The network of the last metagraph this process read (MetagraphService.lastReadNetwork). */
  lastReadNetwork(): ReturnType<MetagraphService['lastReadNetwork']> {
    return this.metagraph.lastReadNetwork();
  }

  /** How many miners' indexes are loaded and when they were synced (MinerIndexService). */
  indexFreshness(): Promise<IndexFreshness> {
    return this.index.indexFreshness();
  }

  /**
   * Every registered neuron (not deregistered ones), by uid, with the calls it has left; none
   * while miners may not be called (the table still lists the stored metagraph's: minerCalls).
   */
  async listNeurons(): Promise<NeuronListing[]> {
    if (!this.metagraph.minerCalls().allowed) return [];
    const miners = (await this.repository.listAll()).filter(
      (miner) => miner.state !== 'deregistered',
    );
    const hotkeys = miners.map((miner) => miner.hotkey);
    const budgets = new Map(
      await Promise.all(
        SYNAPSE_NAMES.map(
          async (synapse) => [synapse, await this.budgets.left(hotkeys, synapse)] as const,
        ),
      ),
    );
    return miners.map((miner) =>
      neuronListing(miner, budgets, this.config.network.validatorMinStake),
    );
  }

  /**
   * For each synapse with a budget, over the miners serving data: the calls this hotkey may
   * still make to them now (users' view), and how many have none left. For alerting before the
   * validator beside us finds its evaluation's calls refused.
   */
  async budgetsLeft(): Promise<SynapseBudgetLeft[]> {
    const hotkeys = this.metagraph.minersServingData().map((miner) => miner.hotkey);
    const budgeted = SYNAPSE_NAMES.filter((synapse) => this.budgets.budgetOf(synapse));
    return Promise.all(
      budgeted.map(async (synapse) => {
        const left = [...(await this.budgets.left(hotkeys, synapse)).values()];
        return {
          synapse,
          callsLeft: left.reduce((sum, miner) => sum + miner.left, 0),
          minersWithoutCalls: left.filter((miner) => miner.left === 0).length,
        };
      }),
    );
  }

  /** Uids of the registered miners never called: no axon, or one at a refused address. */
  minersNeverCalled(): number[] {
    return this.metagraph.minersNeverCalled().map((miner) => miner.uid);
  }

  /** The miner `uid` as it is now, while still `hotkey`'s (MetagraphService.registeredMiner). */
  registeredMiner(uid: number, hotkey: string): MinerEntity | undefined {
    return this.metagraph.registeredMiner(uid, hotkey);
  }

  /**
   * Miners that can be asked `synapse` now: serving data at an allowed address, not cut off by
   * an open circuit, and not refusing the synapse recently (a 404 or 401 to it, or a 403 to a
   * synapse without a budget; a 403 to a budgeted one spends its budget: CallBudgets.left).
   */
  availableMiners(synapse: SynapseName): ServingMiner[] {
    return this.metagraph
      .minersServingData()
      .filter(
        (miner) => !this.client.isCircuitOpen(miner) && this.client.mayAsk(miner.hotkey, synapse),
      );
  }

  /**
   * Answers an on-demand query as ON_DEMAND_MODE says (OnDemandAnswers); a user's without the
   * items of authors in the erased-authors register. Every user's answer, live or stored, comes
   * through here before the data query returns and caches it. Live items come straight from
   * miners and pass no insert that would leave them out, so this reads the register: one indexed
   * query with the answer's distinct authors per answer, where the miners' fan-out before it
   * costs hundreds of times more. A task's answer is left whole: its collection pages by the
   * answer's size and oldest item (a filtered page looked short and stopped paging back), and
   * its insert (TaskLifecycleRepository.addItems) leaves the author out.
   */
  async query(query: NetworkQuery, purpose: QueryPurpose = 'user'): Promise<NetworkQueryResult> {
    const result = await this.onDemand.answer(query, purpose);
    return purpose === 'user' ? this.withoutErased(toSourceId(query.source), result) : result;
  }

  /** `answer` without the items of registered erased authors; itself when it holds none. */
  private async withoutErased<T extends { items: DataItem[] }>(
    source: SourceId,
    answer: T,
  ): Promise<T> {
    const items = await this.erasedAuthors.withoutErased(source, answer.items);
    return items.length === answer.items.length ? answer : { ...answer, items };
  }

  /**
   * The entities of one hour of a source (of one label, when `labelId` is given), for
   * query_bucket: from the index's holders (up to HOLDERS_CONSIDERED, most credible first, each
   * with the label and size its index claims), or from an earlier fetch. A miner's last
   * GetDataEntityBucket call is taken only while the spot checks keep their share of the miners
   * that can be asked it (INDEX_SPOT_CHECK_RESERVE, checked by CallBudgets). Without the items
   * of authors in the erased-authors register, as a user's on-demand answer (query).
   */
  async readBucket(
    source: SourceId,
    timeBucket: number,
    labelId: number | undefined,
  ): Promise<BucketAnswer> {
    const answer = await this.bucketOfHolders(source, timeBucket, labelId);
    // A miner's live bucket passes no insert that would leave an erased author out (query).
    return answer.status === 'success' ? this.withoutErased(source, answer) : answer;
  }

  /** readBucket's answer, an erased author's items still in it. */
  private async bucketOfHolders(
    source: SourceId,
    timeBucket: number,
    labelId: number | undefined,
  ): Promise<BucketAnswer> {
    // Every holder up to the bound: the reader filters them by budget before it picks the most
    // credible (a top ten cut first left holders with a call unasked).
    const holders = await this.index.holders(source, labelId, timeBucket, HOLDERS_CONSIDERED);
    // The index's holders are the stored metagraph's miners: none while miners may not be called.
    const calls = this.metagraph.minerCalls();
    const callable = calls.allowed ? holders : [];
    if (callable.length > 0) return this.buckets.read(source, timeBucket, callable);
    // No holder may be asked now (failing, refused, …), or no miner may be called: an earlier
    // fetch under any holder's label answers; else why, rather than "No miner holding bucket …
    // answered", which none was asked (an error texts audit's finding).
    const held = await this.index.holders(source, labelId, timeBucket, HOLDERS_CONSIDERED, {
      askable: false,
    });
    const labels = held.map((holder) => holder.label);
    const answer = await this.buckets.read(source, timeBucket, [], labels);
    if (answer.status === 'success') return answer;
    const unaskable =
      "(failing, at a refused address (address_refused) or serving no axon: system-status' " +
      'miner_index counts them)';
    const why = !calls.allowed
      ? `no miner may be called: ${calls.why}`
      : held.length === 1
        ? `its holder cannot be asked now ${unaskable}`
        : `none of its ${held.length} holders can be asked now ${unaskable}`;
    return {
      status: 'error',
      message: `Bucket ${timeBucket} is in the miners' data index, but ${why}, and it was not fetched before`,
    };
  }

  /**
   * The miner's index (GetMinerIndex), parsed as of `now`. A malformed or oversize index is
   * rejected (InvalidIndexError, WrongAnswerError) and, like a failed call that is the miner's
   * fault, costs it credibility; the error is rethrown for the caller to count.
   */
  async fetchMinerIndex(miner: ServingMiner, now: Date): Promise<IndexRow[]> {
    try {
      const reply = await this.client.call(
        targetOf(miner),
        'GetMinerIndex',
        getMinerIndexFields(),
        this.config.network.indexSync.fetchTimeoutMs,
        'sync',
      );
      return parseCompressedIndex(reply.read(readCompressedIndex), now);
    } catch (error) {
      if (error instanceof InvalidIndexError || error instanceof WrongAnswerError)
        this.credibility.record([{ uid: miner.uid, hotkey: miner.hotkey, score: 0 }]);
      else if (error instanceof MinerCallError && !NOT_THE_MINERS_FAULT.has(error.reason))
        this.credibility.record([
          { uid: miner.uid, hotkey: miner.hotkey, score: failureScore(error.reason) },
        ]);
      throw error;
    }
  }

  /**
   * The index spot check of one bucket of the miner's, fetched and checked against its index
   * claim exactly as query_bucket fetches it: moves its credibility, keeps the data. Its call is
   * the checks' own ('check'), exempt from the share users leave them: for spot checks only.
   */
  spotCheckBucket(
    miner: ServingMiner,
    bucket: BucketKey,
    claimedBytes: number,
  ): Promise<FetchOutcome> {
    return this.buckets.fetch(targetOf(miner), bucket, claimedBytes, 'check');
  }

  /**
   * Scores 0 the spot checks these miners refused, in a run whose other checks were answered
   * (IndexSpotChecks): refusing, a miner keeps the checks off the claims its credibility weighs.
   */
  recordRefusedChecks(miners: readonly ServingMiner[]): void {
    this.credibility.record(miners.map(({ uid, hotkey }) => ({ uid, hotkey, score: 0 })));
  }

  /**
   * Forgets the stored items and bucket fetches older than `date` (the network keeps 30 days of
   * data), whole days at a time (the item store drops daily partitions); the days dropped.
   */
  deleteBucketFetchesBefore(date: Date): Promise<number> {
    return this.buckets.deleteFetchedBefore(date);
  }
}

import { MinerCalls, MinerCounts, HotkeyCheck } from '../network-status';
import {
  Inject,
  Injectable,
  Logger,
  OnApplicationBootstrap,
  OnModuleDestroy,
} from '@nestjs/common';
import { isValidator } from '../../common/validator-standing';
import { AppConfig } from '../../config/app-config';
import { InjectConfig } from '../../config/config.module';
import { ValidatorIdentity } from '../bittensor/validator-identity';
import { currentState, isServing, MinerEntity, ServingMiner } from '../miner.entity';
import { MetagraphNetwork, MinersRepository, StoredMetagraph } from '../miners.repository';
import { MinerClient } from '../transport/miner-client';
import { ChainIdentity } from '../chain/subtensor-connection';
import { roundTo } from '../../common/round-to';
import { LATE, orLate } from '../../common/within';
import { checkHotkey } from './hotkey-standing';
import { METAGRAPH_SOURCE, MetagraphSource } from './metagraph-source';
import { MetagraphWriter } from './metagraph-writer';
import { StoredMetagraphUse } from './stored-metagraph-use';

/** Reload from the database this often, to see credibility moved by other replicas. */
const REFRESH_INTERVAL_MS = 30_000;

/**
 * How long start-up waits for the first read of the source before it listens without it, the
 * read going on: a node that accepts the connection and stays silent held the start for all of
 * SUBTENSOR_TIMEOUT_MS (docs/decisions.md, "The metagraph from the chain").
 */
export const START_WAIT_MS = 5000;

/** The outcome of the latest attempt to read and apply the metagraph, in this process. */
export interface MetagraphSyncAttempt {
  ok: boolean;
  at: Date;
  error?: string;
}

/**
 * Keeps the miners table in line with the metagraph source (at start and whenever the source
 * changes) and holds the current miners in memory for query routing. A source that cannot be
 * read, or whose answer would drop most neurons at once, leaves what is stored untouched.
 * Writing a read (MetagraphWriter) and whether what is stored is used (StoredMetagraphUse) are
 * beside it.
 */
@Injectable()
export class MetagraphService implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger(MetagraphService.name);
  private miners: MinerEntity[] = [];
  private stopWatching: (() => void) | undefined;
  private refreshTimer: NodeJS.Timeout | undefined;
  private syncing: Promise<void> = Promise.resolve();
  private lastAttempt: MetagraphSyncAttempt | undefined;
  private readonly storedUse: StoredMetagraphUse;
  private readonly writer: MetagraphWriter;
  /** The own hotkey's standing and uid last logged (undefined: none yet): one line per change. */
  private loggedStanding: string | undefined;
  private markReady: () => void = () => undefined;
  private firstSyncEnded = false;
  private stopped = false;
  /** Settles once the first sync (successful or not) has loaded the miners. */
  readonly ready = new Promise<void>((resolve) => (this.markReady = resolve));

  constructor(
    @Inject(METAGRAPH_SOURCE) private readonly source: MetagraphSource | null,
    repository: MinersRepository,
    client: MinerClient,
    @InjectConfig() private readonly config: AppConfig,
    private readonly identity: ValidatorIdentity,
  ) {
    this.storedUse = new StoredMetagraphUse(source, repository, this.logger);
    this.writer = new MetagraphWriter(repository, client, config, this.logger);
  }

  async onApplicationBootstrap(): Promise<void> {
    // The source is watched once the first read has ended: a chain source's next read comes
    // sooner after a failed one, which it knows only then.
    const firstEnded = () => {
      this.firstSyncEnded = true;
      this.markReady();
      if (this.source && !this.stopped) this.stopWatching = this.source.watch(() => this.sync());
    };
    const first = this.sync().then(firstEnded);
    const outcome = await orLate(first, START_WAIT_MS);
    this.refreshTimer = setInterval(() => void this.reload(), REFRESH_INTERVAL_MS).unref();
    if (outcome !== LATE) return;
    this.logger.warn(
      `the metagraph from ${this.source?.description} is not read after ${START_WAIT_MS / 1000} s: ` +
        'starting without it, the read goes on',
    );
    // Within the wait, its failure (the stored miners unreadable) failed the start; past it,
    // the start is over: said, and the source watched all the same.
    first.catch((error: Error) => {
      this.logger.error(`the first metagraph read failed: ${error.message}`);
      firstEnded();
    });
    // What is stored meanwhile, unless the read ended first (it reloads after applying). Within
    // a wait of its own: a database slow to answer may be why the read is late, and the stored
    // read then waited out the statement timeout (20 s to listen, a cold-start audit).
    const storedRead = this.storedUse.miners().then((stored) => {
      if (stored && !this.firstSyncEnded) this.miners = stored;
    });
    if ((await orLate(storedRead, START_WAIT_MS)) === LATE)
      this.logger.warn(
        `the stored miners are not read after ${START_WAIT_MS / 1000} s either: starting ` +
          'without miners, the reads go on',
      );
  }

  async onModuleDestroy(): Promise<void> {
    this.stopped = true;
    this.stopWatching?.();
    clearInterval(this.refreshTimer);
    await this.source?.close?.();
  }

  /**
   * The source, the chain its connection reached (null without one), the latest attempt to read
   * it (null without a source) and what is stored: nothing while what is stored is another
   * source's, which `storedNotInUse` says in the operator's words, file path or node address
   * included (absent otherwise): system-status' alone.
   */
  async status(): Promise<{
    source: string | null;
    chain: ChainIdentity | null;
    lastAttempt: MetagraphSyncAttempt | null;
    stored: StoredMetagraph | undefined;
    storedNotInUse?: string;
  }> {
    const { stored, notInUse } = await this.storedUse.current();
    return {
      source: this.source?.description ?? null,
      chain: this.source?.chain ?? null,
      lastAttempt: this.lastAttempt ?? null,
      stored,
      ...(notInUse ? { storedNotInUse: notInUse.detail } : {}),
    };
  }

  /**
   * Whether miners may be called now, and if not why, as of the last reload: the gate of every
   * path that calls or lists miners (MinerCalls). This service's own lists (minersServingData,
   * counts, …) are empty while it is closed; a path that takes its miners elsewhere (the index's
   * holders, the miners table) asks it first.
   */
  minerCalls(): MinerCalls {
    const problem = this.storedUse.notInUse();
    return problem ? { allowed: false, ...problem } : { allowed: true };
  }

  /**
   * The network of the last metagraph this process read, at start or since (applied from the
   * source, or read stored), null before any: what health says while the database is away.
   */
  lastReadNetwork(): MetagraphNetwork | null {
    return this.storedUse.lastNetwork();
  }

  /** Re-reads the source into the table; calls are serialized so two syncs never interleave. */
  sync(): Promise<void> {
    this.syncing = this.syncing.then(() => this.syncOnce());
    return this.syncing;
  }

  /**
   * Every miner that may be called, failing ones included; callers filter further. A permit
   * holder under VALIDATOR_MIN_STAKE is a miner to the subnet, so it is one here too.
   */
  minersServingData(): ServingMiner[] {
    return this.registeredMiners().filter(isServing);
  }

  /**
   * Registered miners this gateway never calls: they serve no axon (port or address 0 on the
   * chain: nothing can be asked of them, by us or by any validator), or one at an address it
   * refuses (`address_refused`: outside MINER_ALLOWED_NETWORKS, or announced by another
   * coldkey's neuron too). Their indexes cannot be renewed or checked.
   */
  minersNeverCalled(): MinerEntity[] {
    return this.registeredMiners().filter((miner) => !isServing(miner));
  }

  /**
   * The miner `uid` as the metagraph last applied or reloaded has it, while it is still the
   * miner `hotkey` (registered, no validator); undefined once it is not. A call queued before a
   * metagraph moved on may be meant for a miner that no longer holds the uid, or that serves
   * another axon now: the queued record keeps the old one.
   */
  registeredMiner(uid: number, hotkey: string): MinerEntity | undefined {
    return this.registeredMiners().find((miner) => miner.uid === uid && miner.hotkey === hotkey);
  }

  /**
   * Each neuron's coldkey by hotkey, deregistered ones included (a stored delivery outlives its
   * miner's registration): stored answers count the operators that delivered an item by it, as
   * live answers count the coldkeys of the miners that answered.
   */
  coldkeysByHotkey(): Map<string, string> {
    return new Map(this.miners.map((miner) => [miner.hotkey, miner.coldkey]));
  }

  /** Neurons registered now that are miners, whatever their axon. */
  private registeredMiners(): MinerEntity[] {
    return this.miners.filter(
      (miner) => !this.isValidator(miner) && miner.state !== 'deregistered',
    );
  }

  /**
   * The registered neurons counted (health, system-status, the `gateway_miners` gauge), from
   * memory: the metagraph as last applied or reloaded (every 30 s) and the states recorded since.
   * Counted in the database through the main pool, they waited for a connection behind the
   * requests of a saturated pool and were cut at health's second, which then said 0 miners.
   */
  counts(): MinerCounts {
    const now = Date.now();
    const registered = this.miners.filter((miner) => miner.state !== 'deregistered');
    const miners = registered.filter((miner) => !this.isValidator(miner));
    return {
      total: registered.length,
      serving: registered.filter((miner) => miner.axonUrl !== null).length,
      validators: registered.length - miners.length,
      available: miners.filter(
        (miner) => miner.axonUrl !== null && currentState(miner, now) === 'active',
      ).length,
      addressRefused: miners.filter((miner) => miner.state === 'address_refused').length,
    };
  }

  /**
   * Validators (permit and VALIDATOR_MIN_STAKE) with their stake, for stake-weighted aggregation.
   */
  validators(): MinerEntity[] {
    return this.miners.filter((miner) => this.isValidator(miner) && miner.state !== 'deregistered');
  }

  isValidator(miner: MinerEntity): boolean {
    return isValidator(miner, this.config.network.validatorMinStake);
  }

  /** Whether this gateway's hotkey is a validator in the metagraph in use (null: none loaded). */
  hotkeyCheck(): HotkeyCheck | null {
    const { netuid, network } = this.config;
    return checkHotkey(this.miners, this.identity.hotkey, netuid, network.validatorMinStake);
  }

  /** Applies credibility values just written to the database to the in-memory copy. */
  updateCredibility(values: ReadonlyMap<number, number>): void {
    for (const miner of this.miners) {
      const value = values.get(miner.uid);
      if (value !== undefined) miner.credibility = value;
    }
  }

  /**
   * As MinersRepository.setState: a refused address stays refused until the next sync, and a
   * `failing` state lasts the circuit's cooldown; only while the uid is the hotkey observed.
   */
  updateState(observed: { uid: number; hotkey: string }, state: MinerEntity['state']): void {
    const miner = this.miners.find(
      (candidate) => candidate.uid === observed.uid && candidate.hotkey === observed.hotkey,
    );
    if (!miner || miner.state === 'deregistered') return;
    if (miner.state === 'address_refused' && state !== 'address_refused') return;
    miner.state = state;
    miner.failingUntil =
      state === 'failing' ? new Date(Date.now() + this.config.network.breakerCooldownMs) : null;
  }

  /**
   * The miner's state as currentState reads it now (undefined: not in the metagraph, or its uid
   * is another hotkey's now).
   */
  stateOf(observed: { uid: number; hotkey: string }): MinerEntity['state'] | undefined {
    const miner = this.miners.find(
      (candidate) => candidate.uid === observed.uid && candidate.hotkey === observed.hotkey,
    );
    return miner && currentState(miner, Date.now());
  }

  private async syncOnce(): Promise<void> {
    if (this.source) {
      try {
        const network = await this.writer.apply(this.source, await this.source.read());
        this.storedUse.applied(network);
        this.lastAttempt = { ok: true, at: new Date() };
      } catch (error) {
        const message = (error as Error).message;
        this.lastAttempt = { ok: false, at: new Date(), error: message };
        this.logger.error(
          `metagraph from ${this.source.description} not applied, ${await this.storedUse.whatStaysInUse()}: ${message}`,
        );
      }
    }
    await this.reload();
    this.logHotkeyStanding();
  }

  /**
   * One line when the hotkey's standing is first known and at each change of standing or uid:
   * info as a validator (uid, permit, stake), else a warning saying what it costs.
   */
  private logHotkeyStanding(): void {
    const check = this.hotkeyCheck();
    if (!check) return;
    const logged = `${check.standing} ${check.neuron?.uid ?? ''}`;
    if (logged === this.loggedStanding) return;
    this.loggedStanding = logged;
    if (check.problem !== undefined || !check.neuron) {
      this.logger.warn(check.problem ?? `this gateway's hotkey stands as ${check.standing}`);
      return;
    }
    const { uid, stake } = check.neuron;
    this.logger.log(
      `this gateway's hotkey ${this.identity.hotkey} is a validator on netuid ${this.config.netuid}: ` +
        `uid ${uid}, validator permit, stake ${stake === null ? 'unknown (the node gave none: the permit decides)' : `${roundTo(stake, 2)} α (stake weight)`}`,
    );
  }

  /**
   * The miners as stored, unless the stored metagraph is another source's than the configured
   * one (StoredMetagraphUse); those in memory stay when the database does not answer.
   */
  private async reload(): Promise<void> {
    const miners = await this.storedUse.miners();
    if (miners) this.miners = miners;
  }
}

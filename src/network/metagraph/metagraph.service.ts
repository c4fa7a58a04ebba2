import {
  Inject,
  Injectable,
  Logger,
  OnApplicationBootstrap,
  OnModuleDestroy,
} from '@nestjs/common';
import { MinerEntity } from '../miner.entity';
import { MinersRepository } from '../miners.repository';
import { MetagraphNeuron } from '../protocol';
import { MinerClient } from '../transport/miner-client';
import { METAGRAPH_SOURCE, MetagraphSource } from './metagraph-source';

/** Reload from the database this often, to see credibility moved by other replicas. */
const REFRESH_INTERVAL_MS = 30_000;

/**
 * Keeps the miners table in line with the metagraph source (at start and whenever the source
 * changes) and holds the current miners in memory for query routing. A source that cannot be
 * read leaves what is stored untouched.
 */
@Injectable()
export class MetagraphService implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger(MetagraphService.name);
  private miners: MinerEntity[] = [];
  private stopWatching: (() => void) | undefined;
  private refreshTimer: NodeJS.Timeout | undefined;
  private syncing: Promise<void> = Promise.resolve();
  private markReady: () => void = () => undefined;
  /** Settles once the first sync (successful or not) has loaded the miners. */
  readonly ready = new Promise<void>((resolve) => (this.markReady = resolve));

  constructor(
    @Inject(METAGRAPH_SOURCE) private readonly source: MetagraphSource | null,
    private readonly repository: MinersRepository,
    private readonly client: MinerClient,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    await this.sync();
    this.markReady();
    if (this.source) this.stopWatching = this.source.watch(() => void this.sync());
    this.refreshTimer = setInterval(() => void this.reload(), REFRESH_INTERVAL_MS).unref();
  }

  onModuleDestroy(): void {
    this.stopWatching?.();
    clearInterval(this.refreshTimer);
  }

  /** Re-reads the source into the table; calls are serialized so two syncs never interleave. */
  sync(): Promise<void> {
    this.syncing = this.syncing.then(() => this.syncOnce());
    return this.syncing;
  }

  /** Every miner that may be called (not validators), failing ones included; callers filter further. */
  minersServingData(): MinerEntity[] {
    return this.miners.filter(
      (miner) =>
        !miner.validatorPermit &&
        miner.axonUrl !== null &&
        miner.state !== 'deregistered' &&
        miner.state !== 'address_refused',
    );
  }

  /** Validators with their stake, for stake-weighted aggregation. */
  validators(): MinerEntity[] {
    return this.miners.filter((miner) => miner.validatorPermit && miner.state !== 'deregistered');
  }

  /** Applies credibility values just written to the database to the in-memory copy. */
  updateCredibility(values: ReadonlyMap<number, number>): void {
    for (const miner of this.miners) {
      const value = values.get(miner.uid);
      if (value !== undefined) miner.credibility = value;
    }
  }

  /** As MinersRepository.setState: a refused address stays refused until the next sync. */
  updateState(uid: number, state: MinerEntity['state']): void {
    const miner = this.miners.find((candidate) => candidate.uid === uid);
    if (!miner || miner.state === 'deregistered') return;
    if (miner.state !== 'address_refused' || state === 'address_refused') miner.state = state;
  }

  private async syncOnce(): Promise<void> {
    if (this.source) {
      try {
        const metagraph = await this.source.read();
        const refused = await this.refusedAxons(metagraph.neurons);
        await this.repository.syncNeurons(metagraph.neurons, refused);
        this.logger.log(
          `metagraph from ${this.source.description}: ${metagraph.neurons.length} neurons` +
            (refused.size > 0
              ? `; ${refused.size} axons outside MINER_ALLOWED_NETWORKS, never contacted (uids ${[...refused].join(', ')})`
              : ''),
        );
      } catch (error) {
        this.logger.error(
          `metagraph from ${this.source.description} not applied, keeping the stored one: ${(error as Error).message}`,
        );
      }
    }
    await this.reload();
  }

  /** Uids whose axon host is (or resolves to) an address outside MINER_ALLOWED_NETWORKS. */
  private async refusedAxons(neurons: readonly MetagraphNeuron[]): Promise<Set<number>> {
    const refused = new Set<number>();
    await Promise.all(
      neurons.map(async (neuron) => {
        if (neuron.axon_url === null) return;
        const host = new URL(neuron.axon_url).hostname;
        if (!(await this.client.permitsHost(host))) refused.add(neuron.uid);
      }),
    );
    return refused;
  }

  private async reload(): Promise<void> {
    try {
      this.miners = await this.repository.listAll();
    } catch (error) {
      this.logger.warn(`could not reload miners: ${(error as Error).message}`);
    }
  }
}

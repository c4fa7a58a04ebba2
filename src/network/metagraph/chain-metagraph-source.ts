import { Logger } from '@nestjs/common';
import { FIRST_RETRY_MS, retryDelay } from '../../common/retry-delay';
import { SubtensorConfig } from '../../config/app-config';
import { ChainMetagraphReader } from '../chain/chain-metagraph';
import { ChainIdentity, SubtensorConnection } from '../chain/subtensor-connection';
import { MetagraphNetwork } from '../miners.repository';
import { MetagraphFile } from '../protocol';
import { MetagraphSource } from './metagraph-source';

/**
 * Reads subnet `netuid`'s metagraph from a subtensor node every `syncIntervalMs`. A read that
 * fails (node down, slow, garbage) is retried sooner, backing off; what was read before stays
 * in use meanwhile (MetagraphService never applies a failed read).
 */
export class ChainMetagraphSource implements MetagraphSource {
  private readonly logger = new Logger(ChainMetagraphSource.name);
  /** A refused call is asked no more on that runtime: one warning each, through our logger. */
  private readonly reader = new ChainMetagraphReader((call, error) =>
    this.logger.warn(
      `subtensor ${this.connection.address} refused ${call} (${error.message}); ` +
        'the metagraph is read with the calls it answers',
    ),
  );
  private failedReads = 0;

  constructor(
    private readonly connection: SubtensorConnection,
    private readonly netuid: number,
    private readonly settings: SubtensorConfig,
  ) {}

  get description(): string {
    return `subtensor ${this.connection.address} netuid ${this.netuid}`;
  }

  get chain(): ChainIdentity | undefined {
    return this.connection.identity;
  }

  networkOf(): MetagraphNetwork {
    return 'subtensor';
  }

  async read(): Promise<MetagraphFile> {
    try {
      // The genesis of the connection the read was made on (the connection's identity is that
      // of the latest connection, which another caller of the shared connection may have made).
      const metagraph = await this.connection.use(async (api) => ({
        ...(await this.reader.read(api, this.netuid)),
        genesis_hash: api.genesisHash.toHex(),
      }));
      this.failedReads = 0;
      return metagraph;
    } catch (error) {
      this.failedReads += 1;
      throw error;
    }
  }

  watch(sync: () => Promise<void>): () => void {
    let timer: NodeJS.Timeout | undefined;
    let stopped = false;
    const schedule = () => {
      if (stopped) return;
      timer = setTimeout(() => void sync().finally(schedule), this.nextDelay()).unref();
    };
    schedule();
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
  }

  close(): Promise<void> {
    return this.connection.close();
  }

  /** After a failed read the next comes sooner: 5 s, doubling, up to the sync interval. */
  private nextDelay(): number {
    if (this.failedReads === 0) return this.settings.syncIntervalMs;
    return retryDelay(this.failedReads - 1, FIRST_RETRY_MS, this.settings.syncIntervalMs);
  }
}

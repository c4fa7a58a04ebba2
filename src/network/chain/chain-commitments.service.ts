import { Inject, Injectable } from '@nestjs/common';
import { AppConfig } from '../../config/app-config';
import { InjectConfig } from '../../config/config.module';
import { publicKeyOfAddress } from '../bittensor/keypair';
import {
  CommitmentRule,
  CommitmentWindow,
  readCommitmentWindow,
  readWindowAhead,
} from './commitment-window';
import { ChainCommitment, readCommitment, readCommitments } from './commitments';
import { SubtensorConnection } from './subtensor-connection';

export const SUBTENSOR_CONNECTION = Symbol('SUBTENSOR_CONNECTION');

/**
 * Validators' commitments on subnet NETUID, read through the node the metagraph is read from
 * (one connection). Without SUBTENSOR_URL there is no chain: `available` is false.
 */
@Injectable()
export class ChainCommitmentsService {
  constructor(
    @Inject(SUBTENSOR_CONNECTION) private readonly connection: SubtensorConnection | null,
    @InjectConfig() private readonly config: AppConfig,
  ) {}

  get available(): boolean {
    return this.connection !== null;
  }

  /** Every commitment under NETUID, by hotkey. Throws ChainUnavailableError when the node cannot be used. */
  all(): Promise<ChainCommitment[]> {
    return this.chain().use((api) => readCommitments(api, this.config.netuid));
  }

  /**
   * One hotkey's commitment, or undefined (also for a string that is no address: no account
   * committed it, and the node's AccountId would refuse it with a plain error). Throws
   * ChainUnavailableError when the node cannot be used.
   */
  of(hotkey: string): Promise<ChainCommitment | undefined> {
    if (publicKeyOfAddress(hotkey) === null) return Promise.resolve(undefined);
    return this.chain().use((api) => readCommitment(api, this.config.netuid, hotkey));
  }

  /**
   * When the chain will take `hotkey`'s next commitment, after `rule` refused one in block
   * `refusedAt`; undefined when its storage cannot say (commitment-window.ts). Throws
   * ChainUnavailableError when the node cannot be used.
   */
  commitmentWindow(
    hotkey: string,
    rule: CommitmentRule,
    refusedAt: number | undefined,
  ): Promise<CommitmentWindow | undefined> {
    return this.chain().use((api) =>
      readCommitmentWindow(api, this.config.netuid, hotkey, rule, refusedAt),
    );
  }

  /**
   * When the chain would refuse `hotkey`'s commitment made now as too soon, the window it waits
   * for (commitment-window.ts, readWindowAhead); undefined when it would take it, or its storage
   * cannot say. Throws ChainUnavailableError when the node cannot be used.
   */
  windowAhead(hotkey: string): Promise<(CommitmentWindow & { rule: CommitmentRule }) | undefined> {
    return this.chain().use((api) => readWindowAhead(api, this.config.netuid, hotkey));
  }

  private chain(): SubtensorConnection {
    if (!this.connection) throw new Error('no chain configured (SUBTENSOR_URL)');
    return this.connection;
  }
}

import { Inject, Injectable } from '@nestjs/common';
import { AppConfig } from '../../config/app-config';
import { InjectConfig } from '../../config/config.module';
import { publicKeyOfAddress } from '../bittensor/keypair';
import { ValidatorIdentity } from '../bittensor/validator-identity';
import { CommitmentSubmitter } from './commitment-submitter';
import { Inclusion, CommitmentRule, CommitmentWindow } from './commitment-results';
import { readCommitmentWindow, readWindowAhead } from './commitment-window';
import { ChainCommitment, readCommitment, readCommitments } from './commitments';
import { SubtensorConnection } from './subtensor-connection';

/** What the node's reads and writes throw when it cannot be used (callers tell it apart). */
export { ChainUnavailableError } from './subtensor-connection';

export const SUBTENSOR_CONNECTION = Symbol('SUBTENSOR_CONNECTION');

/**
 * Validators' commitments on subnet NETUID, read through the node the metagraph is read from
 * (one connection), and ours written through it (commit, signed by the validator's hotkey).
 * Without SUBTENSOR_URL there is no chain: `available` is false.
 */
@Injectable()
export class ChainCommitmentsService {
  private readonly submitter: CommitmentSubmitter | undefined;

  constructor(
    @Inject(SUBTENSOR_CONNECTION) private readonly connection: SubtensorConnection | null,
    @InjectConfig() private readonly config: AppConfig,
    identity: ValidatorIdentity,
  ) {
    if (connection)
      this.submitter = new CommitmentSubmitter(connection, identity.keypair, config.netuid);
  }

  get available(): boolean {
    return this.connection !== null;
  }

  /**
   * Every commitment under NETUID, by hotkey. Throws ChainUnavailableError when the node cannot be
   * used.
   */
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

  /**
   * Commits `sha` (a Gravity commit's) as our commitment under NETUID and waits until it is in a
   * block (commitment-submitter.ts). Throws CommitmentRateLimitedError when the chain refuses it
   * as too soon.
   */
  commit(sha: string): Promise<Inclusion> {
    if (!this.submitter) throw noChain();
    return this.submitter.commit(sha);
  }

  /**
   * Closes the node connection, which ends a commit waiting on it (the connection is shared:
   * only when the whole application is stopping).
   */
  async close(): Promise<void> {
    await this.connection?.close();
  }

  private chain(): SubtensorConnection {
    if (!this.connection) throw noChain();
    return this.connection;
  }
}

function noChain(): Error {
  return new Error('no chain configured (SUBTENSOR_URL)');
}

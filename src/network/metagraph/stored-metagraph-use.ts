import type { Logger } from '@nestjs/common';
import { debugEnabled } from '../../common/logging/debug-lines';
import { FailureStreak } from '../../common/logging/failure-streak';
import { plural } from '../../common/plural';
import type { MinerEntity } from '../miner.entity';
import type { MetagraphNetwork, MinersRepository, StoredMetagraph } from '../miners.repository';
import type { NetworkProblem } from '../network-status';
import type { MetagraphSource } from './metagraph-source';
import { foreignOrigin } from './stored-origin';

/**
 * Whether MetagraphService uses the stored metagraph: not while it is another source's than the
 * configured one (foreignOrigin), whose miners are then none, as before any metagraph was read
 * (docs/decisions.md, "The metagraph from the chain"). Also the network of the last metagraph
 * this process applied or read stored, which health says while the database is away.
 */
export class StoredMetagraphUse {
  /** The network of the last metagraph this process applied or read stored (null: none yet). */
  private network: MetagraphNetwork | null = null;
  /**
   * Why the stored metagraph is not in use, as last reloaded: it is another source's than the
   * configured one (foreignOrigin). Undefined while it is in use, or none is stored.
   */
  private reason: NetworkProblem | undefined;
  /**
   * Reloads failed in a row (the database away), said as FailureStreak finds worth it: a warning
   * at every reload wrote 120 of the same line an hour of an outage.
   */
  private readonly failedReloads = new FailureStreak();

  constructor(
    private readonly source: MetagraphSource | null,
    private readonly repository: MinersRepository,
    private readonly logger: Logger,
  ) {}

  /** Why the stored metagraph is not in use, as of the last reload; undefined while it is. */
  notInUse(): NetworkProblem | undefined {
    return this.reason;
  }

  /** The network of the last metagraph applied or read stored; null before any. */
  lastNetwork(): MetagraphNetwork | null {
    return this.network;
  }

  /** A metagraph of `network` was just applied from the source. */
  applied(network: MetagraphNetwork): void {
    this.network = network;
  }

  /** What is stored, unless it is another source's: then nothing, and why (for status). */
  async current(): Promise<{
    stored: StoredMetagraph | undefined;
    notInUse: NetworkProblem | undefined;
  }> {
    const stored = await this.repository.lastMetagraph();
    const notInUse = this.foreignReason(stored);
    if (!notInUse) this.network = stored?.network ?? this.network;
    return { stored: notInUse ? undefined : stored, notInUse };
  }

  /**
   * The miners as stored, none when the stored metagraph is another source's; undefined when
   * the database did not answer (said in a warning), so that the miners in memory stay.
   */
  async miners(): Promise<MinerEntity[] | undefined> {
    try {
      const [stored, miners] = await Promise.all([
        this.repository.lastMetagraph(),
        this.repository.listAll(),
      ]);
      this.noteNotInUse(this.foreignReason(stored));
      if (debugEnabled())
        this.logger.debug(
          { neurons: miners.length, block: stored?.block ?? null, in_use: !this.reason },
          `miners reloaded: ${miners.length} neurons` +
            (stored ? ` (block ${stored.block})` : '') +
            (this.reason ? ', none in use (another source stored them)' : ''),
        );
      const failures = this.failedReloads.ended();
      if (failures > 0)
        this.logger.log(`miners reloaded again, after ${plural(failures, 'failed reload')}`);
      return this.reason ? [] : miners;
    } catch (error) {
      const line = `could not reload miners: ${(error as Error).message}`;
      if (this.failedReloads.failed(line))
        this.logger.warn(`${line} (the miners in memory are kept; said again once a reload works)`);
      else if (debugEnabled()) this.logger.debug(line);
      return undefined;
    }
  }

  /** After a failed read: the stored metagraph stays in use, or there is none yet. */
  async whatStaysInUse(): Promise<string> {
    let stored: StoredMetagraph | undefined;
    try {
      stored = await this.repository.lastMetagraph();
    } catch {
      return 'keeping what is stored (the database did not say what)';
    }
    const foreign = this.foreignReason(stored);
    if (stored && foreign)
      return (
        `and the stored one is another source's (${stored.network} from ${stored.source}): ` +
        'no miners to call until a read succeeds'
      );
    this.network = stored?.network ?? this.network;
    if (stored)
      return `keeping the stored one (block ${stored.block}, read at ${stored.readAt.toISOString()})`;
    return 'and none is stored yet: no miners to call until a read succeeds';
  }

  /** Without a source there is nothing to compare with: what is stored is used (development). */
  private foreignReason(stored: StoredMetagraph | undefined): NetworkProblem | undefined {
    return stored && this.source ? foreignOrigin(stored, this.source) : undefined;
  }

  /** One line when the stored metagraph stops or starts being used, not one per reload. */
  private noteNotInUse(reason: NetworkProblem | undefined): void {
    if (reason?.detail === this.reason?.detail) return;
    if (reason) this.logger.warn(reason.detail);
    else if (this.reason)
      this.logger.log(
        `the stored metagraph is ${this.source?.description}'s now: its miners are used`,
      );
    this.reason = reason;
  }
}

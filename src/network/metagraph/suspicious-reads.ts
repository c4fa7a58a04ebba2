import type { Logger } from '@nestjs/common';
import type { MinersRepository } from '../miners.repository';
import type { MetagraphFile } from '../protocol';
import type { MetagraphSource } from './metagraph-source';

/** A read that drops more than half of the registered neurons at once is not applied. */
export class SuspiciousMetagraphError extends Error {
  override readonly name = 'SuspiciousMetagraphError';
}

/**
 * A suspicious answer is the subnet changing (subtensor's trim_to_max_allowed_uids renumbers a
 * subnet smaller), not a broken read, once the source has given it this many reads in a row…
 */
export const SUSPICIOUS_CONFIRM_READS = 3;
/** …spanning at least this long (with METAGRAPH_SYNC_INTERVAL's 5 minutes, three reads). */
export const SUSPICIOUS_CONFIRM_MS = 10 * 60_000;

/** A suspicious answer being confirmed: its neuron count, first read (epoch ms), reads so far. */
interface PendingSuspicious {
  neurons: number;
  since: number;
  reads: number;
}

/**
 * MetagraphService's guard against a broken read: it remembers the suspicious answer being
 * confirmed from one read to the next.
 */
export class SuspiciousReads {
  /** The suspicious answer the latest reads in a row gave (undefined: the latest was not). */
  private pending: PendingSuspicious | undefined;

  constructor(
    private readonly repository: Pick<MinersRepository, 'lastMetagraph' | 'listAll'>,
    private readonly logger: Logger,
  ) {}

  /**
   * Most registered neurons vanishing at once is a broken answer, not the subnet changing: it is
   * refused, unless the source keeps giving it. The same non-empty answer (as many neurons) on
   * SUSPICIOUS_CONFIRM_READS reads in a row spanning SUSPICIOUS_CONFIRM_MS is applied: a trim,
   * not a glitch. A source or netuid other than the stored metagraph's is not judged against it
   * at all: its neurons are another subnet's. Nor is a devnet's: a devnet restarted with fewer
   * miners writes its file once, and that file, refused, was never read again. An empty answer
   * is never applied, whatever its source or netuid: no subnet worth serving has no neuron,
   * and a file of another netuid with none deregistered every miner (an audit's finding).
   */
  async refuseIfSuspicious(source: MetagraphSource, metagraph: MetagraphFile): Promise<void> {
    if (source.networkOf(metagraph) === 'devnet') {
      this.pending = undefined;
      return;
    }
    if (metagraph.neurons.length === 0) {
      const registered = (await this.repository.listAll()).filter(
        (miner) => miner.state !== 'deregistered',
      ).length;
      if (registered > 0) {
        this.pending = undefined;
        throw new SuspiciousMetagraphError(
          `refused as suspicious: it would deregister ${registered} of ${registered} registered ` +
            'neurons at once (0 in the answer; an empty answer is never applied)',
        );
      }
    }
    const stored = await this.repository.lastMetagraph();
    // Netuid 0 (the root network) is what a file without `netuid` was stored as before such a
    // file was read as NETUID's: unknown, as null is, or its first read after the upgrade would
    // pass unjudged (a review's finding).
    const storedNetuid = stored?.netuid || null;
    if (
      stored &&
      (stored.source !== source.description ||
        (storedNetuid !== null && storedNetuid !== metagraph.netuid))
    ) {
      this.pending = undefined;
      this.logger.warn(
        `metagraph from ${source.description} (netuid ${metagraph.netuid}) applied without the ` +
          `suspicious-read check: the stored one is from ${stored.source}` +
          (storedNetuid === null ? '' : ` (netuid ${storedNetuid})`),
      );
      return;
    }
    const registered = (await this.repository.listAll()).filter(
      (miner) => miner.state !== 'deregistered',
    );
    // A uid on a new hotkey is a new neuron too (its credibility, its index start over): a read
    // giving most uids new hotkeys at once (a node of another network with the same uid range,
    // or a bad answer) was applied unjudged (a chain-faults audit). No subnet replaces half its
    // hotkeys between two reads.
    const hotkeys = new Map(metagraph.neurons.map((neuron) => [neuron.uid, neuron.hotkey]));
    const kept = registered.filter((miner) => hotkeys.get(miner.uid) === miner.hotkey).length;
    const gone = registered.filter((miner) => !hotkeys.has(miner.uid)).length;
    const rekeyed = registered.length - kept - gone;
    if (registered.length === 0 || kept * 2 >= registered.length) {
      this.pending = undefined;
      return;
    }
    const count = metagraph.neurons.length;
    const now = Date.now();
    const pending =
      this.pending?.neurons === count
        ? { ...this.pending, reads: this.pending.reads + 1 }
        : { neurons: count, since: now, reads: 1 };
    this.pending = pending;
    const loss =
      `it would ${lossOf(gone, rekeyed)} of ${registered.length} registered neurons at once ` +
      `(${count} in the answer)`;
    if (
      count > 0 &&
      pending.reads >= SUSPICIOUS_CONFIRM_READS &&
      now - pending.since >= SUSPICIOUS_CONFIRM_MS
    ) {
      this.pending = undefined;
      this.logger.warn(
        `metagraph from ${source.description} accepted although ${loss}: the same answer on ` +
          `${pending.reads} reads in a row over ${Math.round((now - pending.since) / 60_000)} ` +
          'minutes is the subnet changing (a trim), not a broken read',
      );
      return;
    }
    throw new SuspiciousMetagraphError(
      `refused as suspicious: ${loss}` +
        (count > 0
          ? `; read ${pending.reads} of ${SUSPICIOUS_CONFIRM_READS} in a row with this answer, ` +
            `applied once they span ${SUSPICIOUS_CONFIRM_MS / 60_000} minutes`
          : ''),
    );
  }
}

/** `deregister 3`, `give 700 a new hotkey`, or both: what a suspicious read would do. */
function lossOf(gone: number, rekeyed: number): string {
  const parts = [
    gone > 0 ? `deregister ${gone}` : '',
    rekeyed > 0 ? `give ${rekeyed} a new hotkey` : '',
  ].filter(Boolean);
  return parts.join(' and ');
}

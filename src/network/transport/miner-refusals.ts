import { Logger } from '@nestjs/common';
import { minerFields } from '../../common/logging/miner-fields';
import { SynapseName } from '../../common/synapse-names';
import { CallBudgets } from './call-budgets';
import { MinerCooldowns } from './miner-cooldowns';
import { MinerCallError } from './miner-failures';

/** A miner's refusal of a synapse, by the status it answered (see COOLDOWN_MS). */
export type Refusal = 'not_served' | 'blacklisted' | 'unauthorized';

/** How long a miner that answered a synapse with 404 is not asked it again. */
export const NOT_SERVED_COOLDOWN_MS = 60 * 60_000;

/**
 * How long a synapse is not asked of a miner after it refused it: a 404 means the miner does
 * not serve it (public subnet 13 miners dropped OnDemandRequest); a 403 that its blacklist or
 * its limit for our hotkey refuses us; a 401 that it could not verify us (our clock, or the uid
 * re-registered under a hotkey other than the one we signed for). A 403 over the limit, to a
 * synapse with a call budget, spends the budget instead (CallBudgets.spend: for every replica,
 * until the miner's window has reset); the cooldown is for a 403 to a synapse without one,
 * where there is nothing to spend, and for a 403 for who we are (NOT_COUNTED_403).
 */
const COOLDOWN_MS: Record<Refusal, number> = {
  not_served: NOT_SERVED_COOLDOWN_MS,
  blacklisted: 15 * 60_000,
  unauthorized: 5 * 60_000,
};
const STATUS_REFUSALS: Readonly<Record<number, Refusal>> = {
  404: 'not_served',
  403: 'blacklisted',
  401: 'unauthorized',
};
const LOG_EVERY_MS = 60 * 60_000;

/**
 * The 403s of the subnet's miners (`default_blacklist`) that come before the call is counted
 * against our hotkey's limit: the miner does not know our hotkey, or not as a validator's.
 * Only its other 403 (over the period's limit) says the window's calls are spent.
 */
const NOT_COUNTED_403 = /\bunrecognized hotkey\b|\bis not a validator\b/i;

interface RefusingMiner {
  uid: number;
  hotkey: string;
}

/**
 * What a miner's non-200 answer means, and what we remember of it: the cooldowns its refusals
 * start, the budget a 403 spends, and the logs that say why, once an hour per miner and synapse.
 */
export class MinerRefusals {
  private readonly cooldowns: MinerCooldowns<Refusal>;

  constructor(
    private readonly budgets: CallBudgets,
    now: () => number,
    private readonly logger: Logger,
  ) {
    this.cooldowns = new MinerCooldowns(now);
  }

  /** Why the miner is in a cooldown for this synapse (it refused it recently), if it is. */
  active(hotkey: string, synapse: SynapseName): Refusal | undefined {
    return this.cooldowns.active(hotkey, synapse);
  }

  /** The failure a non-200 status is, with the cooldown, budget and log it calls for. */
  async ofStatus(
    miner: RefusingMiner,
    synapse: SynapseName,
    status: number,
    message: string,
  ): Promise<MinerCallError> {
    const refusal = STATUS_REFUSALS[status];
    if (!refusal) {
      if (status === 408) return new MinerCallError('timeout', 'the axon timed out (408)');
      if (status === 503) return new MinerCallError('busy', 'the axon is busy (503)');
      // The axon's own words (a bittensor axon puts its exception's text in a 500's body),
      // escaped and cut by errorMessage: without them on-call could not tell why (a log audit).
      return new MinerCallError('http_error', `HTTP ${status}: ${message}`);
    }
    // A 403 for who we are was not counted by the miner: it spends nothing, and the call taken
    // for it is given back (MinerClient). Spending it left every miner asked while our hotkey
    // had lost its permit or stake unasked for the miner's window after it was restored (an
    // audit's finding).
    const uncounted = refusal === 'blacklisted' && NOT_COUNTED_403.test(message);
    const spentUntil =
      refusal === 'blacklisted' && !uncounted ? await this.spendBudget(miner, synapse) : null;
    if (!spentUntil) this.cooldowns.start(miner.hotkey, synapse, refusal, COOLDOWN_MS[refusal]);
    if (this.cooldowns.shouldLog(`${miner.hotkey}|${synapse}|${refusal}`, LOG_EVERY_MS))
      this.log(miner, synapse, refusal, message, spentUntil);
    const error = new MinerCallError(refusal, `HTTP ${status}: ${message}`);
    error.uncounted = uncounted;
    return error;
  }

  private log(
    miner: RefusingMiner,
    synapse: SynapseName,
    refusal: Refusal,
    message: string,
    spentUntil: Date | null,
  ): void {
    const who = `miner ${miner.uid} (${miner.hotkey})`;
    const fields = minerFields(miner);
    if (refusal === 'not_served')
      this.logger.log(
        fields,
        `${who} does not serve ${synapse} (404): not asked again for an hour`,
      );
    else if (refusal === 'blacklisted' && spentUntil)
      this.logger.warn(
        fields,
        `${who} refused our ${synapse} call (403): ${message}. Its ${synapse} budget counts ` +
          `as spent until ${spentUntil.toISOString()}: its own window will have reset`,
      );
    else if (refusal === 'blacklisted')
      this.logger.warn(fields, `${who} blacklists our ${synapse} calls (403): ${message}`);
    else
      this.logger.warn(
        fields,
        // Not our hotkey missing from the miner's metagraph: its blacklist runs before the
        // signature check and answers that with a 403.
        `${who} could not verify our ${synapse} call (401): ${message}. Either this machine's ` +
          `clock is off (nonces are nanoseconds of wall time), or uid ${miner.uid} no longer has ` +
          `hotkey ${miner.hotkey}, the one we signed for: it re-registered and our metagraph is stale`,
      );
  }

  /**
   * After a 403: the synapse's budget at this miner is spent until the miner's window has reset
   * (null without a budget). Should Postgres be away, this replica falls back to a cooldown.
   */
  private async spendBudget(miner: RefusingMiner, synapse: SynapseName): Promise<Date | null> {
    try {
      return (await this.budgets.spend(miner.hotkey, synapse)) ?? null;
    } catch (error) {
      this.logger.warn(
        minerFields(miner),
        `miner ${miner.uid}: its 403 to ${synapse} could not be recorded in its budget: ${(error as Error).message}`,
      );
      return null;
    }
  }
}

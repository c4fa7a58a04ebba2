import { isBrokenCircuitError, isBulkheadRejectedError, TaskCancelledError } from 'cockatiel';
import { SynapseName } from '../../common/synapse-names';
import { MinerFailureReason } from '../query-failures';
import { WrongAnswerError } from '../sn13/messages';
import { AddressRefusedError } from './address-policy';

/**
 * Failures that say nothing about the miner's honesty: we did not call it (our bulkhead, an
 * open circuit, no budget left, a refused address), we abandoned the call (our shutdown), or it
 * refused us for reasons of its own that are not faults (it does not serve the synapse, it
 * blacklists us, it could not verify us). They move no credibility and do not open the circuit.
 */
export const NOT_THE_MINERS_FAULT: ReadonlySet<MinerFailureReason> = new Set([
  'busy',
  'circuit_open',
  'not_served',
  'blacklisted',
  'unauthorized',
  'address_refused',
  'no_budget',
  'shutdown',
]);

/** Why a call to a miner failed: an answer of the wrong shape is the miner's `wrong_schema`. */
export function failureReasonOf(error: unknown): MinerFailureReason {
  if (error instanceof MinerCallError) return error.reason;
  return error instanceof WrongAnswerError ? 'wrong_schema' : 'network';
}

/** What a failure says of the miner: 0, or null (no news) when it is not the miner's fault. */
export function failureScore(reason: MinerFailureReason): number | null {
  return NOT_THE_MINERS_FAULT.has(reason) ? null : 0;
}

/**
 * Whether the miner answered the call with a refusal: a 403 (its blacklist or call limit, or
 * who we are to it), a 404 (it does not serve the synapse), a 401 (its check of our signature)
 * or a 503 (busy), on a call that went out. A spot check so refused says nothing of the miner
 * by itself, but scores 0 beside checks of the same run that were answered (IndexSpotChecks).
 */
export function refusedWhenSent(error: unknown): boolean {
  return (
    error instanceof MinerCallError &&
    !error.unsent &&
    (error.reason === 'blacklisted' ||
      error.reason === 'not_served' ||
      error.reason === 'unauthorized' ||
      error.reason === 'busy')
  );
}

export class MinerCallError extends Error {
  /**
   * Refused before its request went out (set by MinerClient.call): no miner counted it, and a
   * budget call taken for it was given back. A 503 is `busy` too, but was sent.
   */
  unsent = false;
  /**
   * Sent, but refused before the miner counted it (a 403 for not knowing us as a validator:
   * MinerRefusals): a budget call taken for it was given back too.
   */
  uncounted = false;

  constructor(
    readonly reason: MinerFailureReason,
    message: string,
  ) {
    super(message);
    this.name = 'MinerCallError';
  }
}

/** A `no_budget` refusal because the budget could not be read (Postgres away): every miner's. */
export class BudgetUnreadableError extends MinerCallError {
  constructor(synapse: SynapseName, cause: string) {
    super('no_budget', `${synapse} not sent: the call budget could not be read (${cause})`);
  }
}

/**
 * Whether a call was refused unsent because the miner's budget was spent, by other queries
 * since it was chosen (`no_budget`, not because the budget could not be read): the miner was
 * left out for budget, as those without a call before the round are.
 */
export function isBudgetSpent(error: unknown): boolean {
  return (
    error instanceof MinerCallError &&
    error.reason === 'no_budget' &&
    !(error instanceof BudgetUnreadableError)
  );
}

/**
 * Whether a failed call leaves its place in a query's fan-out to the next candidate without
 * counting against the cap on spares (runQuorum), which bounds the calls a query sends and so
 * the budget it spends. True of a call refused unsent for a reason of that miner alone: its
 * circuit (`circuit_open`), our concurrency cap to it (`busy` unsent; a 503 was sent), its
 * budget spent since the miners were chosen (`no_budget`), its address (`address_refused`), a
 * refusal's cooldown. Not our shutdown nor a budget that could not be read: they refuse every
 * miner alike, and uncounted each would walk the whole ranking to the same refusal
 * (docs/decisions.md, "Spares").
 */
export function freesItsPlace(error: unknown): boolean {
  return (
    error instanceof MinerCallError &&
    error.unsent &&
    error.reason !== 'shutdown' &&
    !(error instanceof BudgetUnreadableError)
  );
}

/**
 * A `no_budget` refusal of a miner's last GetDataEntityBucket call, kept for the index spot
 * checks (INDEX_SPOT_CHECK_RESERVE); `freeAt`: when a miner without one has one again.
 */
export class KeptForChecksError extends MinerCallError {
  constructor(
    synapse: SynapseName,
    readonly freeAt: Date | null,
  ) {
    super(
      'no_budget',
      `the miner's last ${synapse} call is kept for the index spot checks (INDEX_SPOT_CHECK_RESERVE)`,
    );
  }
}

/** What an error thrown by a call is, as a failure reason (the timeout it had, for the message). */
export function classify(error: unknown, timeoutMs: number): MinerCallError {
  if (error instanceof MinerCallError) return error;
  if (error instanceof AddressRefusedError || hasCode(error, 'ADDRESS_REFUSED'))
    return new MinerCallError('address_refused', (error as Error).message);
  if (isBulkheadRejectedError(error))
    return new MinerCallError('busy', 'too many calls in flight to this miner');
  if (isBrokenCircuitError(error))
    return new MinerCallError('circuit_open', 'circuit open after repeated failures');
  // Not cockatiel's isTaskCancelledError: in 3.2.1 it tests for the bulkhead error instead.
  if (error instanceof TaskCancelledError)
    return new MinerCallError('timeout', `no answer within ${timeoutMs} ms`);
  return new MinerCallError('network', error instanceof Error ? error.message : String(error));
}

/**
 * A call whose connection the miner's host refused (ECONNREFUSED: the TCP handshake was answered
 * with a reset): nothing reached the axon, so the miner counted no call. Its budget call is
 * given back: kept, a miner offline for a minute lost this gateway's calls of the hour to the
 * queries of that minute (a scale audit's finding).
 */
export function refusedAtConnect(error: unknown): boolean {
  return (
    hasCode(error, 'ECONNREFUSED') ||
    hasCode((error as { cause?: unknown } | null)?.cause, 'ECONNREFUSED')
  );
}

function hasCode(error: unknown, code: string): boolean {
  return typeof error === 'object' && error !== null && (error as { code?: unknown }).code === code;
}

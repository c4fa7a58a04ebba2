/**
 * What publishing our commitment on chain answers (ChainCommitmentsService): where it was
 * included, or that the chain takes none for now and when it will again. Public, for the
 * publication worker (docs/decisions.md, "The network's public surface").
 */

/** Subtensor makes a block every 12 seconds. */
export const BLOCK_MS = 12_000;

/**
 * Which of the Commitments pallet's two "too soon" rules refused a commitment, by the error it
 * answered: a minimum of blocks between an account's commitments (`CommitmentSetRateLimitExceeded`,
 * older runtimes), or a quota of space per subnet epoch (`SpaceLimitExceeded`, finney's spec 343).
 */
export type CommitmentRule = 'rate' | 'space';

/**
 * When the chain will take a commitment again: from block `acceptedFrom`; its head is `head`;
 * `intervalBlocks` is the rule's whole interval (an epoch, `tempo + 1`, or `RateLimit`), the
 * longest a refusal can have to wait, whatever the storage says.
 */
export interface CommitmentWindow {
  acceptedFrom: number;
  head: number;
  intervalBlocks: number;
}

/** Where the commitment was included (no hash when it was found in storage, not submitted). */
export interface Inclusion {
  blockNumber: number;
  blockHash: string | null;
}

/**
 * The chain refused the commitment for now (its rate limit): wait and retry, not a failure.
 * The Commitments pallet's errors that mean "too soon" are the per-account rate limit
 * (`CommitmentSetRateLimitExceeded`), and in runtimes that replaced it with a space quota per
 * subnet epoch (finney's spec 343, the recorded one), `SpaceLimitExceeded`: `rule` says which,
 * `block` is the block that refused it (when the node said), so that the wait can be read off
 * the chain (commitment-window.ts). Also thrown, with `window`, for a commitment not submitted
 * because the chain's storage said it would be refused.
 */
export class CommitmentRateLimitedError extends Error {
  override readonly name = 'CommitmentRateLimitedError';

  constructor(
    message: string,
    readonly rule: CommitmentRule,
    readonly block: number | undefined,
    /** Read before submitting (nothing was submitted): when the chain takes one again. */
    readonly window?: CommitmentWindow,
  ) {
    super(message);
  }
}

import type { ApiPromise } from '@polkadot/api';
import type { Codec } from '@polkadot/types/types';
import { CommitmentRule, CommitmentWindow } from './commitment-results';

/** The rule that refused a commitment, by the error the Commitments pallet answered. */
export function ruleOfError(name: string): CommitmentRule | undefined {
  if (name === 'CommitmentSetRateLimitExceeded') return 'rate';
  if (name === 'SpaceLimitExceeded') return 'space';
  return undefined;
}

/**
 * The subnet's epoch at `block`, as subtensor counts it (`get_epoch_index`): epochs are
 * `tempo + 1` blocks long and offset by `netuid + 1` blocks, so subnets do not all turn at once.
 */
export function epochIndex(block: number, tempo: number, netuid: number): number {
  return Math.floor((block + netuid + 1) / (tempo + 1));
}

/**
 * The space our commitment takes by the pallet's count: its fields' length, at least 100 bytes
 * (a SHA's `Raw40` is 40).
 */
export const SHA_COMMITMENT_SPACE = 100;

/** An account's used space (`UsedSpaceOf`) in the subnet's epoch `lastEpoch`. */
export interface SpaceUsage {
  lastEpoch: number;
  usedSpace: number;
}

/**
 * The space rule: an account's used space (`UsedSpaceOf`, counted in epoch `lastEpoch`) starts
 * over at the first block of a later epoch. Undefined when the storage does not explain a
 * refusal in block `refusedAt`: its count is of an earlier epoch, or leaves room for a SHA under
 * `maxSpace` (when the runtime has it), so the space was free then.
 */
export function spaceResetBlock(
  usage: SpaceUsage,
  maxSpace: number | undefined,
  refusedAt: number,
  tempo: number,
  netuid: number,
): number | undefined {
  if (usage.lastEpoch < epochIndex(refusedAt, tempo, netuid)) return undefined;
  if (maxSpace !== undefined && usage.usedSpace + SHA_COMMITMENT_SPACE <= maxSpace)
    return undefined;
  return (usage.lastEpoch + 1) * (tempo + 1) - (netuid + 1);
}

/**
 * The rate rule: a commitment is taken from `RateLimit` blocks after the account's last one
 * (`LastCommitment`). Undefined when that does not explain a refusal in block `refusedAt`.
 */
export function rateLimitResetBlock(
  lastCommitment: number,
  rateLimit: number,
  refusedAt: number,
): number | undefined {
  const from = lastCommitment + rateLimit;
  return refusedAt < from ? from : undefined;
}

/**
 * When the chain will take `hotkey`'s next commitment under `netuid`, after `rule` refused one in
 * block `refusedAt` (the head when unknown), from the storage the pallet decides by (pallets/
 * commitments/src/lib.rs, `set_commitment`). Space rule: `Commitments.UsedSpaceOf(netuid,
 * hotkey)`, `Commitments.MaxSpace` and `SubtensorModule.Tempo(netuid)`. Rate rule:
 * `Commitments.LastCommitment(netuid, hotkey)` and the `RateLimit` storage value, or the
 * `RateLimit` constant of runtimes without it. Undefined when this runtime's metadata lacks them,
 * or the storage does not explain the refusal.
 */
export async function readCommitmentWindow(
  api: ApiPromise,
  netuid: number,
  hotkey: string,
  rule: CommitmentRule,
  refusedAt: number | undefined,
): Promise<CommitmentWindow | undefined> {
  const commitments = api.query.commitments;
  if (rule === 'space') {
    const usedSpaceOf = commitments?.usedSpaceOf;
    const tempoOf = api.query.subtensorModule?.tempo;
    const maxSpaceOf = commitments?.maxSpace;
    if (!usedSpaceOf || !tempoOf) return undefined;
    const [head, usage, tempo, maxSpace] = await Promise.all([
      api.query.system.number(),
      usedSpaceOf(netuid, hotkey) as unknown as Promise<OptionOf<Usage>>,
      tempoOf(netuid),
      maxSpaceOf ? maxSpaceOf() : undefined,
    ]);
    if (usage.isNone) return undefined;
    const used = usage.unwrap();
    const counted = { lastEpoch: toNumber(used.lastEpoch), usedSpace: toNumber(used.usedSpace) };
    const limit = maxSpace === undefined ? undefined : toNumber(maxSpace);
    const at = refusedAt ?? toNumber(head);
    const blocks = toNumber(tempo);
    // An epoch is `tempo + 1` blocks (epochIndex).
    return windowFrom(spaceResetBlock(counted, limit, at, blocks, netuid), head, blocks + 1);
  }
  const lastCommitmentOf = commitments?.lastCommitment;
  const rateLimitOf = commitments?.rateLimit;
  const rateLimitConstant = api.consts.commitments?.rateLimit;
  if (!lastCommitmentOf || (!rateLimitOf && !rateLimitConstant)) return undefined;
  const [head, last, rateLimit] = await Promise.all([
    api.query.system.number(),
    lastCommitmentOf(netuid, hotkey) as unknown as Promise<OptionOf<Codec>>,
    rateLimitOf ? rateLimitOf() : rateLimitConstant,
  ]);
  if (last.isNone) return undefined;
  const at = refusedAt ?? toNumber(head);
  const blocks = toNumber(rateLimit);
  return windowFrom(rateLimitResetBlock(toNumber(last.unwrap()), blocks, at), head, blocks);
}

/**
 * Whether the chain would refuse a commitment of `hotkey`'s made now as too soon, read before one
 * is submitted: when it would, the window it opens (its rule, and from which block); undefined
 * when it would take one, or this runtime's storage cannot say. The rule is the one the runtime
 * keeps the storage of: the space rule where it has `UsedSpaceOf` and `MaxSpace` (with room under
 * `MaxSpace` it takes one), else the rate rule. A refused commitment is still included in a
 * block: submitted anyway, a vote replacing one that waits out the window sent another refusal.
 */
export async function readWindowAhead(
  api: ApiPromise,
  netuid: number,
  hotkey: string,
): Promise<(CommitmentWindow & { rule: CommitmentRule }) | undefined> {
  const commitments = api.query.commitments;
  if (commitments?.usedSpaceOf && !commitments.maxSpace) return undefined;
  const rule: CommitmentRule = commitments?.usedSpaceOf ? 'space' : 'rate';
  const window = await readCommitmentWindow(api, netuid, hotkey, rule, undefined);
  return window && window.acceptedFrom > window.head ? { ...window, rule } : undefined;
}

function windowFrom(
  acceptedFrom: number | undefined,
  head: Codec,
  intervalBlocks: number,
): CommitmentWindow | undefined {
  return acceptedFrom === undefined
    ? undefined
    : { acceptedFrom, head: toNumber(head), intervalBlocks };
}

function toNumber(value: Codec): number {
  return Number(value.toString());
}

interface OptionOf<T> {
  isNone: boolean;
  unwrap(): T;
}

/** `UsageTracker` as the recorded runtime's metadata types it. */
interface Usage {
  lastEpoch: Codec;
  usedSpace: Codec;
}

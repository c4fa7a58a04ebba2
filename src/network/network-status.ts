/**
 * What NetworkService reports of the network's state, and the words system-status and the
 * answers share about it: the public contract of the network's status (docs/decisions.md,
 * "The network's public surface").
 */

/** The registered neurons counted (NetworkService.countMiners). */
export interface MinerCounts {
  /** Registered neurons, validators included. */
  total: number;
  /** Registered neurons with an axon. */
  serving: number;
  /** Registered validators: a validator permit and the minimum stake (or an unknown stake). */
  validators: number;
  /** Miners that may be called now: not validators, an axon, `active` (currentState). */
  available: number;
  /** Miners whose axon is outside MINER_ALLOWED_NETWORKS. */
  addressRefused: number;
}

/**
 * Where this gateway's own hotkey stands on the subnet. Miners answer validators only (wire
 * spec §3): with any standing but `validator`, every call is refused 403 and spends its budget.
 */
export const HOTKEY_STANDINGS = [
  'validator',
  'not_registered',
  'no_permit',
  'stake_too_low',
] as const;
export type HotkeyStanding = (typeof HOTKEY_STANDINGS)[number];

export interface HotkeyCheck {
  standing: HotkeyStanding;
  /** The hotkey's neuron, when it is registered. */
  neuron?: { uid: number; validatorPermit: boolean; stake: number | null };
  /** What is wrong and what it costs, for the log and system-status; absent for `validator`. */
  problem?: string;
}

/**
 * Why something of the network is not usable, said twice: `why` names the kind of problem, in
 * words any key's holder may read (an answer's error); `detail` adds what it concerns, a file's
 * path or the node's address, for the log and system-status (master key). API keys are the
 * service's consumers, not its operators (docs/decisions.md, "Secrets in logs and error bodies").
 */
export interface NetworkProblem {
  why: string;
  detail: string;
}

/**
 * Whether the network may call miners now, and if not why (NetworkService.minerCalls): the one
 * gate of every path that calls or lists miners. Closed while the stored metagraph is another
 * source's than the configured one (foreignOrigin): the metagraph's own miners are none then,
 * but the index's holders and the miners table still list that source's, and none of them is
 * called until a read of the configured source succeeds. An answer that could ask no miner says
 * `why` after `No miners available: `; system-status' `components.miners.error` says `detail`.
 */
export type MinerCalls = { allowed: true } | ({ allowed: false } & NetworkProblem);

/**
 * How many miners' indexes are loaded (hold rows: what the statistics' totals sum), how many of
 * those the stored-data path may use now (`usable`: held by a miner it may ask, the rule of
 * anyIndexLoaded) and why it may not use the others, and when the newest and the oldest of them
 * were synced (null: none loaded); and when any miner's index was last read, an empty one
 * included (null: none ever was).
 */
export interface IndexFreshness {
  loaded: number;
  usable: number;
  /** The loaded indexes not usable, by why: they add up to `loaded - usable`. */
  unusable: UnusableIndexes;
  /** When the earliest cooldown of a failing miner holding an index ends (null: none failing). */
  failingUntil: Date | null;
  newestSyncedAt: Date | null;
  oldestSyncedAt: Date | null;
  lastReadAt: Date | null;
}

/**
 * Loaded indexes whose miner may not be asked now: its circuit is open (`failing` within its
 * cooldown), its address is outside MINER_ALLOWED_NETWORKS, it left the metagraph (the
 * metagraph sync drops its index in the same transaction, so this stays 0), or it serves no axon.
 */
export interface UnusableIndexes {
  failing: number;
  addressRefused: number;
  deregistered: number;
  noAxon: number;
}

/**
 * A miner's index is dropped once it has missed this many syncs in a row by its own fault (a
 * failed call, a rejected index, no axon served): two keep it, the third drops it. What a
 * miner that stopped answering claimed is no longer evidence of what it holds. Counted in
 * syncs, not time: a gateway that was down, or a call not made for want of budget, is not the
 * miner's doing.
 */
export const STALE_AFTER_SYNCS = 3;

/**
 * What keeps the miners holding a loaded index from being asked now, listed
 * (`2 failing (circuit open; …), 1 refused by MINER_ALLOWED_NETWORKS`): the same words in
 * system-status' `miner_index` and in the on-demand answer that could use none of them.
 */
export function whyUnusable({
  unusable,
  failingUntil,
}: Pick<IndexFreshness, 'unusable' | 'failingUntil'>): string {
  return [
    unusable.failing > 0
      ? `${unusable.failing} failing (circuit open; the first cooldown ends at ${failingUntil?.toISOString()})`
      : '',
    unusable.addressRefused > 0
      ? `${unusable.addressRefused} refused by MINER_ALLOWED_NETWORKS`
      : '',
    unusable.deregistered > 0 ? `${unusable.deregistered} deregistered` : '',
    unusable.noAxon > 0 ? `${unusable.noAxon} serving no axon` : '',
  ]
    .filter((reason) => reason !== '')
    .join(', ');
}

/** `the index of 1 miner is` / `the indexes of 3 miners are`. */
export function loadedIndexes(loaded: number): string {
  return loaded === 1 ? 'the index of 1 miner is' : `the indexes of ${loaded} miners are`;
}

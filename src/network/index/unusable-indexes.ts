import type { IndexFreshness } from './miner-index-read.repository';

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

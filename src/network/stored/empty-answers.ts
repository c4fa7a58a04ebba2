import type { IndexFreshness } from '../network-status';
import { loadedIndexes, whyUnusable } from '../network-status';

/*
 * What a user's stored answer that found nothing says when it could not look everywhere, rather
 * than a success with `no_data_available` that clients of the hosted API read as "none exists"
 * (OnDemandAnswers.queryStored chooses which).
 */

/** Why a query is answered from stored data: it tells a user what to change. */
export type StoredBecause = 'configured' | 'refused' | 'budget';

const MINERS_CANNOT_SEARCH: Record<StoredBecause, string> = {
  configured: 'this gateway asks miners for stored data only (ON_DEMAND_MODE=stored)',
  refused: 'miners do not take on-demand queries now',
  budget:
    "every miner taking on-demand queries has spent this validator's OnDemandRequest calls for the hour",
};

/**
 * A user's stored answer that could search only the gateway's store, and found nothing. `freeAt`:
 * when the first miner's budget call frees up, for `budget`. Budgets are rolling windows: "try
 * again next hour" sent clients back at the top of the hour, when nothing had freed (an error
 * texts audit's finding), as the live path's answer had before.
 */
export function partialAndEmpty(why: StoredBecause, freeAt?: Date): string {
  const when =
    why === 'budget' && freeAt ? ` (the first call frees up at ${freeAt.toISOString()})` : '';
  return (
    'Only data already stored by this gateway was searched, and none matched: the query names no label ' +
    '(an X #hashtag or $cashtag, a Reddit r/subreddit) whose hours could be fetched from miners, and ' +
    `${MINERS_CANNOT_SEARCH[why]}${when}. Add a label to its keywords.`
  );
}

/**
 * A user's labelled stored answer that found nothing while miners' indexes are loaded but none of
 * their holders may be asked now: which miners hold the labels is known, none can be used.
 */
export function indexUnusable(freshness: IndexFreshness): string {
  // When the first failing miner may be asked again is in whyUnusable's words already (a second
  // sentence said it twice: an error texts audit).
  return (
    `The miners' data index: ${loadedIndexes(freshness.loaded)} loaded, but no miner holding ` +
    `one can be asked now: ${whyUnusable(freshness)}. Only data already stored by this ` +
    `gateway was searched, and none matched.`
  );
}

/**
 * A user's labelled stored answer that found nothing while no miner's index is loaded
 * (StoredAnswer.indexLoaded): which miners hold the labels is not known, so this is no "no data".
 */
export function indexNotLoaded(
  sync: {
    intervalMs: number;
    onStart: boolean;
    fetchTimeoutMs: number;
  },
  lastReadAt: Date | null = null,
): string {
  const minutes = Math.round(sync.intervalMs / 60_000);
  const when = sync.onStart
    ? `The index sync runs every ${minutes} minutes, and at start unless one ran within that interval (sooner again after one that could call no miner), and reading one miner's index can take up to ${Math.round(sync.fetchTimeoutMs / 1000)} s: a sync still running loads it within minutes, else it is loaded by the next sync, at most ${minutes} minutes after the last one started.`
    : `The index sync runs every ${minutes} minutes, not at start (INDEX_SYNC_ON_START=false): try again after the first one.`;
  // Why, as system-status says it: indexes were read and held nothing (or were dropped), or none
  // was read yet. "Or every sync failed" named a cause that was not (an error texts audit).
  const why = lastReadAt
    ? `the indexes read hold no data, or were dropped since; the last was read at ${lastReadAt.toISOString()}`
    : "no miner's index has been read yet";
  return (
    `The miners' data index is not loaded (${why}), so which miners hold this query's labels ` +
    'is not known: only data already stored by this gateway was searched, and none matched. ' +
    when
  );
}

import { StoredAnswer } from './stored/stored-answer';
import { AnswerOrigin, DataItem } from './protocol';
import { QueryFailures } from './query-failures';

/** What a stored-data answer reports beside the live one's counts. */
export type StoredCounts = Pick<StoredAnswer, 'coverage' | 'buckets' | 'oldestFetchedAt'>;

export interface NetworkQueryResult {
  items: DataItem[];
  error?: string;
  origin: AnswerOrigin;
  minersQueried: number;
  minersResponded: number;
  /** Miners that answered with no items at all. */
  minersEmpty: number;
  /** Miners that answered with only items that passed the checks (an empty answer passes). */
  minersPassedChecks: number;
  minersFailed: QueryFailures;
  /**
   * Miners that might have been asked OnDemandRequest but were left out because the call budget
   * left for this query's purpose was spent (a task's: what is above the users' reserve): not
   * among `minersQueried` nor `minersFailed`. 0 when no live round was considered.
   */
  minersWithoutBudget: number;
  itemsDroppedInvalid: number;
  consensus: number;
  hedged: number;
  deadlineReached: boolean;
  /**
   * Live: some miner's answer held the query's `limit` entities, so the range may hold more than
   * was answered, however many of them the checks dropped.
   */
  limitReached?: boolean;
  /** Present when `origin` is `stored`. */
  stored?: StoredCounts;
}

/** A live answer that asked no miner, with the reason. */
export function emptyResult(error: string, minersWithoutBudget = 0): NetworkQueryResult {
  return {
    items: [],
    error,
    origin: 'live',
    minersQueried: 0,
    minersResponded: 0,
    minersEmpty: 0,
    minersPassedChecks: 0,
    minersFailed: { count: 0, reasons: {} },
    minersWithoutBudget,
    itemsDroppedInvalid: 0,
    consensus: 0,
    hedged: 0,
    deadlineReached: false,
  };
}

import { parseIsoDate } from '../common/validation/iso-date';
import { compareText } from '../common/compare-text';
import { Source } from '../common/source';
import { canonicalItem, itemKey } from './item-uri';
import { authorOfItem, DataItem } from './protocol';
import { QueryMatcher } from './query-matcher';
import { convertEntity } from './sn13/entities';
import { roundTo } from '../common/round-to';
import { ItemCheck } from '../common/metrics/metric-labels';

/** The miner an answer came from. */
export interface AnsweringMiner {
  uid: number;
  /** Its operator: corroboration counts coldkeys, not hotkeys (mergeAnswers). */
  coldkey: string;
}

/** One miner's answer after every item was checked. */
export interface CheckedAnswer extends AnsweringMiner {
  returned: number;
  valid: DataItem[];
  dropped: number;
}

/** A checked answer with its dropped items by the check that dropped each (the first failed). */
export interface CheckedAnswerDrops extends CheckedAnswer {
  droppedBy: Record<ItemCheck, number>;
}

/**
 * Converts a miner's entities to items and keeps those that are well formed, carry a uri that
 * names them (answers become a task's stored items; kept in canonical form) and match the
 * query; drops the rest (and repeats of a post within the same answer, however its uri is
 * spelled, which would otherwise inflate corroboration), counting each under its check.
 * Entities past the `limit` the miner was asked for are dropped unread (`over_limit`): a miner
 * sending 15,000 for a limit of 1,000 had every one converted on the event loop, 0.3 s per
 * answer, and health answered in seconds meanwhile (an event-loop audit). Past twice the limit,
 * most of the answer is dropped, so it counts for nothing (isMostlyDropped).
 */
export function checkAnswer(
  { uid, coldkey }: AnsweringMiner,
  entities: readonly unknown[],
  matcher: QueryMatcher,
  source: Source,
  limit: number,
): CheckedAnswerDrops {
  const seen = new Set<string>();
  const valid: DataItem[] = [];
  const droppedBy = { malformed: 0, wrong_uri: 0, no_match: 0, duplicate: 0, over_limit: 0 };
  const read = Math.min(entities.length, limit);
  for (let index = 0; index < read; index++) {
    const check = checkEntity(entities[index], matcher, source, seen);
    if (typeof check === 'string') droppedBy[check] += 1;
    else valid.push(check);
  }
  droppedBy.over_limit = entities.length - read;
  return {
    uid,
    coldkey,
    returned: entities.length,
    valid,
    dropped: entities.length - valid.length,
    droppedBy,
  };
}

/** The entity as an item, kept (its post added to `seen`), or the check that dropped it. */
function checkEntity(
  entity: unknown,
  matcher: QueryMatcher,
  source: Source,
  seen: Set<string>,
): DataItem | Exclude<ItemCheck, 'over_limit'> {
  const converted = convertEntity(entity, source)?.item;
  if (!converted) return 'malformed';
  const item = canonicalItem(converted);
  if (!item) return 'wrong_uri';
  if (!matcher.matches(item)) return 'no_match';
  const post = itemKey(item);
  if (seen.has(post)) return 'duplicate';
  seen.add(post);
  return item;
}

/** Most of what the answer returned had to be dropped: it counts for nothing and gets a spare. */
export function isMostlyDropped(answer: CheckedAnswer): boolean {
  return answer.dropped * 2 > answer.returned;
}

/**
 * It had items and the checks dropped every one (a GetContentsByBuckets delivery too): the
 * miner said nothing true, which is not "nothing matches" (an empty answer). Its miner failed
 * the query (`invalid_items`), and a delivery of it is no bucket's contents.
 */
export function isDroppedWhole(answer: { returned: number; dropped: number }): boolean {
  return answer.returned > 0 && answer.dropped >= answer.returned;
}

/**
 * An answer counts towards the quorum when it returned items, most of which passed the checks.
 * An empty one does not: counted, three quick empty answers ended the round while the miners
 * holding the data were still answering, and the client was told there was none (an audit's
 * finding; docs/decisions.md, "Quorum counts usable answers").
 */
export function isUsableAnswer(answer: CheckedAnswer): boolean {
  return answer.returned > 0 && !isMostlyDropped(answer);
}

export interface MergedItems {
  items: DataItem[];
  /**
   * How many operators (distinct coldkeys) held each copy of a post (by copyKey: one post
   * whatever its uri's spelling, and one content: a copy saying something else is another copy).
   */
  holders: Map<string, number>;
  /** Share of the returned items held by at least two coldkeys (0 when nothing is returned). */
  consensus: number;
}

/**
 * What two copies of a post must agree on to corroborate each other, as the item store compares
 * them in SQL (`contentOf` in item-store.repository.ts, docs/decisions.md, "Corroboration
 * compares content"): X, the text, the author and the label it is filed under (its first
 * hashtag); Reddit, the body, title, author, subreddit, kind and parent; handles lower-cased,
 * without `@`. Engagement counts, profiles, media urls and the time differ between honest
 * scrapes and are left out.
 */
export function copyKey(item: DataItem): string {
  const content =
    item.source === 'X'
      ? [item.text, authorOfItem(item), item.label]
      : [
          item.body,
          item.title,
          authorOfItem(item),
          item.communityName.toLowerCase(),
          item.dataType,
          item.parentId,
        ];
  return `${itemKey(item)} ${JSON.stringify(content)}`;
}

/**
 * Merges the valid items of every answer, one per post (itemKey): the copy most coldkeys agree
 * on (copyKey), the first of equals. A copy saying something else corroborates nothing: counted
 * by post alone, a miner that rewrote real posts was counted as agreeing with the honest ones
 * (an audit's finding). Holders are counted by coldkey, as the stored path asks a corroborating
 * copy of another coldkey only (holder-choice.ts): counted by hotkey, two miners of one operator
 * sending the same invented posts won the limit cut with consensus 1 and credibility 1 (an
 * audit's finding). When `limit` cuts, posts held by more coldkeys win (then newer ones), or
 * with `newestFirst` the newest win; what is returned is ordered newest first.
 */
export function mergeAnswers(
  answers: readonly CheckedAnswer[],
  limit: number,
  newestFirst = false,
): MergedItems {
  const coldkeys = new Map<string, Set<string>>();
  const byKey = new Map<string, DataItem>();
  const copyOf = new Map<DataItem, string>();
  for (const answer of answers) {
    for (const item of answer.valid) {
      const copy = copyKey(item);
      copyOf.set(item, copy);
      const holding = coldkeys.get(copy) ?? coldkeys.set(copy, new Set()).get(copy)!;
      holding.add(answer.coldkey);
      const key = itemKey(item);
      const kept = byKey.get(key);
      if (!kept || holding.size > coldkeys.get(copyOf.get(kept)!)!.size) byKey.set(key, item);
    }
  }
  const holders = new Map([...coldkeys].map(([copy, holding]) => [copy, holding.size]));
  // Parsed once per item (zoneless = UTC, unlike Date.parse): sorting is the hot part of a query.
  const times = new Map(
    [...byKey.values()].map((item) => [item, parseIsoDate(item.datetime)!.getTime()]),
  );
  const time = (item: DataItem) => times.get(item)!;
  const held = (item: DataItem) => holders.get(copyOf.get(item)!)!;
  // Ties by uri, descending as the store orders them (find-items-sql.ts), in code units: by
  // `localeCompare`, replicas under different LANGs cut `limit` at different items (a flakiness
  // audit).
  const byUri = (a: DataItem, b: DataItem) => compareText(b.uri, a.uri);
  const kept = [...byKey.values()]
    .sort((a, b) => (newestFirst ? 0 : held(b) - held(a)) || time(b) - time(a) || byUri(a, b))
    .slice(0, limit)
    .sort((a, b) => time(b) - time(a) || byUri(a, b));
  return { items: kept, holders, consensus: consensusOf(kept.map(held)) };
}

/**
 * `meta.consensus`, live or stored: the share of the returned items held by at least two
 * operators (each item's count of distinct coldkeys), to four decimals; 0 without items.
 */
export function consensusOf(coldkeysPerItem: readonly number[]): number {
  const corroborated = coldkeysPerItem.filter((count) => count >= 2).length;
  return coldkeysPerItem.length === 0 ? 0 : roundTo(corroborated / coldkeysPerItem.length, 4);
}

/**
 * What one observation says about a miner, 0..1, or null when it says nothing. Invalid or
 * non-matching items pull it down in proportion; valid items seen by miners of other coldkeys too
 * (the same copy: copyKey; `holders` counts coldkeys, the answer's own among them) pull it up: all
 * valid and uncorroborated is 0.5, all valid and all corroborated is 1. A failed call (timeout,
 * 5xx, garbage, oversize) is 0. An empty answer is 0 in a round where some item was corroborated
 * (the data exists, on more than one miner's word, and this miner had none of it, as the subnet's
 * validator penalises an empty answer beside pooled data), and says nothing otherwise: nothing may
 * match, and one miner's uncorroborated items may be invented (docs/decisions.md, "Quorum counts
 * usable answers").
 */
export function credibilityScore(
  answer: CheckedAnswer | undefined,
  holders: ReadonlyMap<string, number>,
): number | null {
  if (!answer) return 0;
  if (answer.returned === 0) return [...holders.values()].some((count) => count >= 2) ? 0 : null;
  const validShare = answer.valid.length / answer.returned;
  const corroborated = answer.valid.filter((item) => (holders.get(copyKey(item)) ?? 0) >= 2).length;
  const corroboratedShare = answer.valid.length === 0 ? 0 : corroborated / answer.valid.length;
  return validShare * (0.5 + 0.5 * corroboratedShare);
}

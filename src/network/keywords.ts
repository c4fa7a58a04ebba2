import { composed } from '../common/characters';
import { Source } from '../common/source';

/**
 * What a keyword of an on-demand query asks for, by source: an X #hashtag, a Reddit subreddit
 * (`r/x`, `/r/x` or `/x`) or text. Read the same way by the query's matcher (query-matcher.ts),
 * the OnDemandRequest sent to miners (sn13/messages.ts) and the stored-data plan.
 */

export type ParsedKeyword =
  /** Case-insensitive substring of the item's text; `text` is lower-cased. */
  | { kind: 'text'; text: string }
  /**
   * X only, one `#tag` (isXTag): a whole tag in the text (holdsXTag), or in the item's hashtag
   * list. `tag` is lower-cased with its `#`.
   */
  | { kind: 'hashtag'; tag: string }
  /** Reddit only: the item's subreddit is `label` (`r/<name>`, lower-cased); not a text match. */
  | { kind: 'subreddit'; label: string };

// Reddit names are letters, digits and underscores; anything else stays a text keyword.
const SUBREDDIT_SELECTOR = /^(?:\/?r\/|\/)([a-z0-9_]+)\/?$/i;

// An X tag is one word, as X's hashtag and cashtag entities are (miners file a post under its
// first, `#` + the entity's text): letters, marks, digits, underscores and the zero-width
// (non-)joiners some scripts write inside words. `#bitcoin halving` or `#bitcoin,` is text: no
// post is filed under it (docs/decisions.md, "On-demand from stored data").
const X_TAG_CHARACTERS = '\\p{L}\\p{M}\\p{N}_\\u200c\\u200d';
const X_TAG = new RegExp(`^[#$][${X_TAG_CHARACTERS}]+$`, 'u');
const X_TAG_CHARACTER = new RegExp(`^[${X_TAG_CHARACTERS}]`, 'u');

/** Whether an X keyword is one `#tag` or `$tag` (trimmed), the shape of a label miners file. */
export function isXTag(keyword: string): boolean {
  return X_TAG.test(keyword);
}

/**
 * Whether `text` holds `tag` as a whole tag: not followed by a character a tag may hold, so
 * `#eth` is not found in `#ethereum` or `#eth_l2` (a post filed under `#ethereum` is not in
 * `#eth`'s buckets, and upstream's on-demand X search quotes the keyword, a token match).
 * Both as the caller has them (the matcher lower-cases both).
 */
export function holdsXTag(text: string, tag: string): boolean {
  for (let at = text.indexOf(tag); at !== -1; at = text.indexOf(tag, at + 1)) {
    if (!X_TAG_CHARACTER.test(text.slice(at + tag.length, at + tag.length + 2))) return true;
  }
  return false;
}

export function parseKeyword(keyword: string, source: Source): ParsedKeyword {
  const trimmed = composed(keyword).trim();
  const lower = trimmed.toLowerCase();
  if (source === 'reddit') {
    const selector = SUBREDDIT_SELECTOR.exec(trimmed);
    if (selector) return { kind: 'subreddit', label: `r/${selector[1].toLowerCase()}` };
  }
  if (source === 'x' && lower.startsWith('#') && isXTag(lower)) {
    return { kind: 'hashtag', tag: lower };
  }
  return { kind: 'text', text: lower };
}

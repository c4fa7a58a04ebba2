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
   * X only, one `#tag` (isXTag): in the text, or in the item's hashtag list. `tag` is
   * lower-cased with its `#`.
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
const X_TAG = /^[#$][\p{L}\p{M}\p{N}_\u200c\u200d]+$/u;

/** Whether an X keyword is one `#tag` or `$tag` (trimmed), the shape of a label miners file. */
export function isXTag(keyword: string): boolean {
  return X_TAG.test(keyword);
}

export function parseKeyword(keyword: string, source: Source): ParsedKeyword {
  const trimmed = keyword.trim();
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

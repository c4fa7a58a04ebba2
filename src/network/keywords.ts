import { composed, composedLowerCase } from '../common/characters';
import { Source } from '../common/source';

/**
 * What a keyword of an on-demand query asks for, by source: an X #hashtag, a Reddit subreddit
 * (`r/x`, `/r/x` or `/x`) or text. Read the same way by the query's matcher (query-matcher.ts),
 * the OnDemandRequest sent to miners (sn13/messages.ts) and the stored-data plan.
 */

export type ParsedKeyword =
  /** Case-insensitive substring of the item's text; `text` is lower-cased (composedLowerCase). */
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
// first, `#` + the entity's text). Its characters are X's own (twitter-text's
// `hashtagAlphaNumeric`): letters, marks, decimal digits, underscores, the zero-width
// (non-)joiners some scripts write inside words, and the punctuation some scripts write inside
// one (Japanese `・`, Catalan `·`, Hebrew `־`, Tibetan `་`, …); and at least one letter or mark
// (`#2024` is no hashtag on X). Its sign is `#` or the full-width `＃` an input method types,
// which X files as `#`. `#bitcoin halving` or `#bitcoin,` is text: no post is filed under it
// (docs/decisions.md, "On-demand from stored data").
const X_TAG_CHARACTERS =
  '\\p{L}\\p{M}\\p{Nd}_\\u200c\\u200d\\ua67e\\u05be\\u05f3\\u05f4\\uff5e\\u301c\\u309b\\u309c\\u30a0\\u30fb\\u3003\\u0f0b\\u0f0c\\u00b7';
// Not a keycap (`#️⃣`: the sign, a variation selector and an enclosing mark).
const X_TAG = new RegExp(
  `^[#＃$](?![\\ufe0f\\u20e3])(?=[${X_TAG_CHARACTERS}]*[\\p{L}\\p{M}])[${X_TAG_CHARACTERS}]+$`,
  'u',
);
const X_TAG_CHARACTER = new RegExp(`^[${X_TAG_CHARACTERS}]`, 'u');
/** X's full-width hash sign: `＃tag` is filed as `#tag`. */
const FULL_WIDTH_HASH = '\uff03';

/** Whether an X keyword is one `#tag` or `$tag` (trimmed), the shape of a label miners file. */
export function isXTag(keyword: string): boolean {
  return X_TAG.test(keyword);
}

/**
 * Whether `text` holds `tag` (`#` and its body) as a whole tag, signed `#` or `＃`: not followed
 * by a character a tag may hold, so `#eth` is not found in `#ethereum` or `#eth_l2` (a post filed
 * under `#ethereum` is not in `#eth`'s buckets, and upstream's on-demand X search quotes the
 * keyword, a token match); or, with `headOfLonger`, also at the head of a longer tag (a label
 * cut to its length is the head of the tag it was cut from). Both as the caller has them (the
 * matcher lower-cases both).
 */
export function holdsXTag(text: string, tag: string, headOfLonger = false): boolean {
  for (const signed of [tag, FULL_WIDTH_HASH + tag.slice(1)]) {
    for (let at = text.indexOf(signed); at !== -1; at = text.indexOf(signed, at + 1)) {
      const end = at + signed.length;
      if (headOfLonger || !X_TAG_CHARACTER.test(text.slice(end, end + 2))) return true;
    }
  }
  return false;
}

export function parseKeyword(keyword: string, source: Source): ParsedKeyword {
  const trimmed = composed(keyword).trim();
  // A tag is a label, lower-cased as miners lower-case theirs (Python's lower(), byte for byte):
  // `#J̌` is `#j` + U+030C, another label than `#ǰ`. Text is read as the matcher reads posts.
  const lower = trimmed.toLowerCase();
  if (source === 'reddit') {
    const selector = SUBREDDIT_SELECTOR.exec(trimmed);
    if (selector) return { kind: 'subreddit', label: `r/${selector[1].toLowerCase()}` };
  }
  if (source === 'x' && /^[#＃]/.test(lower) && isXTag(lower)) {
    return { kind: 'hashtag', tag: `#${lower.slice(1)}` };
  }
  return { kind: 'text', text: composedLowerCase(trimmed) };
}

/*
 * Entity tags in conditional requests (RFC 9110 §8.8.3, §13.1.1, §13.1.2): what an If-Match or
 * If-None-Match value names. Shared by the dataset download and the statistics.
 */

/** The longest If-Match or If-None-Match a request may send: a few tags, or `*`. */
export const ENTITY_TAGS_MAX_LENGTH = 1024;

/**
 * One entity tag of a list and the comma after it (RFC 9110 §8.8.3: `[W/] DQUOTE *etagc
 * DQUOTE`, etagc any visible character but DQUOTE, or obs-text): a comma inside the quotes is the
 * tag's, not the list's. Empty elements (`a, , b`) are allowed, as §5.6.1 has a recipient accept.
 */
const LIST_ELEMENT = /[ \t]*(?:((?:W\/)?"[\x21\x23-\x7e\x80-\xff]*")[ \t]*)?(?:,|$)/y;

/** The tags of a list, or null when it is no list of entity tags. */
function entityTags(header: string): string[] | null {
  const tags: string[] = [];
  LIST_ELEMENT.lastIndex = 0;
  while (LIST_ELEMENT.lastIndex < header.length) {
    const element = LIST_ELEMENT.exec(header);
    if (element === null) return null;
    if (element[1] !== undefined) tags.push(element[1]);
  }
  return tags;
}

/** A tag's opaque part, its quotes included: what weak comparison compares. */
const opaque = (tag: string): string => (tag.startsWith('W/') ? tag.slice(2) : tag);

/**
 * Whether an If-Match or If-None-Match value (`*`, or a list of entity tags) names `tag`: `*`
 * names any representation, and there is one. Weak comparison (If-None-Match, §13.1.2) compares
 * the opaque parts, whether either tag is weak; strong comparison (If-Match, §13.1.1) needs both
 * strong and equal: a weak tag promises no bytes. A value that is no such list names nothing.
 */
export function namesTag(header: string, tag: string, comparison: 'weak' | 'strong'): boolean {
  if (header.trim() === '*') return true;
  const named = entityTags(header) ?? [];
  if (comparison === 'strong')
    return !tag.startsWith('W/') && named.some((candidate) => candidate === tag);
  return named.some((candidate) => opaque(candidate) === opaque(tag));
}

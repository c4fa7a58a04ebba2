import { isStorableText, storableText } from '../../common/validation/storable-text';

/**
 * Text from miners as Postgres can store it. JSON carries U+0000 and unpaired UTF-16 surrogates
 * (`\u0000`, `\ud800`), which a record's strings may hold (broken scrapers, text cut inside an
 * emoji); Postgres stores neither in text or jsonb, and one such string made it refuse a whole
 * insert: a task's page of items (asked again, and refused again, at every collection) or a
 * miner's delivery to the item store. Every item read from a miner passes here once (entities.ts),
 * so answers, the store, task items and datasets hold the same text: U+0000 dropped, each
 * unpaired surrogate replaced by U+FFFD, as a UTF-8 decoder does. See docs/decisions.md
 * ("Text Postgres cannot store").
 */

/**
 * Every escape JSON can write U+0000 or a surrogate as, paired or not (and `\\u…` text, which
 * only costs a needless walk).
 */
const SUSPECT_ESCAPE = /\\u(?:0000|[dD][89a-fA-F])/;

/**
 * The item read from `sources` (the record's JSON, the entity's uri) with every string in it
 * well formed. The sources are scanned first: a string parsed from them can only hold U+0000 or
 * a surrogate that they hold raw or as an escape, so for nearly every record (pydantic writes
 * non-ASCII text raw) the item is answered as it is, without a walk over its strings.
 */
export function storableItem<T>(item: T, sources: readonly string[]): T {
  return sources.every(isPlain) ? item : wellFormed(item);
}

function isPlain(text: string): boolean {
  return isStorableText(text) && !SUSPECT_ESCAPE.test(text);
}

/** The value with every string in it well formed; the value itself when none needed it. */
export function wellFormed<T>(value: T): T {
  return clean(value) as T;
}

/** Items are JSON: strings, numbers, booleans, null, lists and plain objects. */
function clean(value: unknown): unknown {
  if (typeof value === 'string') return storableText(value);
  if (typeof value !== 'object' || value === null) return value;
  let copy: Record<string, unknown> | unknown[] | undefined;
  const holder = value as Record<string, unknown>;
  for (const key in holder) {
    const cleaned = clean(holder[key]);
    if (cleaned === holder[key]) continue;
    copy ??= Array.isArray(value) ? [...(value as unknown[])] : { ...holder };
    (copy as Record<string, unknown>)[key] = cleaned;
  }
  return copy ?? value;
}

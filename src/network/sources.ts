import { Source } from '../common/source';

/**
 * The wire forms of a data source. Inside the gateway a source is a `Source` (`'x' | 'reddit'`,
 * as the API spells it); subnet 13's `DataSource` enum spells it two other ways, and these are
 * the only conversions between them.
 */

/**
 * The enum's value: what miners' indexes, bucket ids and entities carry (and the index tables
 * store).
 */
export type SourceId = 1 | 2;

/** The enum's names: the `source` of every item (miners' records and the API's answers). */
export const SOURCE_NAMES = ['X', 'REDDIT'] as const;
export type SourceName = (typeof SOURCE_NAMES)[number];

const IDS: Readonly<Record<Source, SourceId>> = { reddit: 1, x: 2 };
const NAMES: Readonly<Record<Source, SourceName>> = { reddit: 'REDDIT', x: 'X' };

export function toSourceId(source: Source): SourceId {
  return IDS[source];
}

/** Accepts the id as a number or as the string key used in the index JSON (`"1"`, `"2"`). */
export function sourceOfId(id: number | string): Source | undefined {
  const numeric = typeof id === 'string' ? Number(id) : id;
  if (numeric === IDS.reddit) return 'reddit';
  if (numeric === IDS.x) return 'x';
  return undefined;
}

export function toSourceName(source: Source): SourceName {
  return NAMES[source];
}

/** In any case (`X`, `Reddit`): miners' answers are untrusted. */
export function sourceOfName(name: string): Source | undefined {
  const lower = name.trim().toLowerCase();
  return lower === 'x' || lower === 'reddit' ? lower : undefined;
}

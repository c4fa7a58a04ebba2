import { isRecord } from '../common/is-record';
import { characterCount, composedLowerCase } from '../common/characters';
import { dateRefusal, ISO_DATE_REFUSAL, parseIsoDate } from '../common/validation/iso-date';
import { Source } from '../common/source';
import { authorKey, cutLabel, KEYWORD_MODES, KeywordMode, MAX_LABEL_LENGTH } from './protocol';
import { holdsXTag, parseKeyword, ParsedKeyword } from './keywords';
import { sourceOfName } from './sources';

/**
 * The rules deciding whether an item answers an on-demand query (docs/miner-protocol.md,
 * "Query matching"). The gateway runs them over what miners return, so `matches` takes untrusted
 * input and never throws; the honest devnet miner runs the same rules to answer.
 */

export interface MatchQuery {
  /** `X` or `REDDIT`, any case. */
  source: string;
  usernames?: readonly string[] | null;
  keywords?: readonly string[] | null;
  /** `all` (the default): an item satisfies every keyword; `any`: at least one. */
  keyword_mode?: KeywordMode | null;
  /**
   * Inclusive bounds; a missing bound is open. Strings as parseIsoDate reads them, no zone = UTC.
   */
  start_date?: Date | string | null;
  end_date?: Date | string | null;
}

export interface QueryMatcher {
  readonly source: Source;
  readonly start: Date | null;
  readonly end: Date | null;
  readonly usernames: readonly string[];
  readonly keywords: readonly ParsedKeyword[];
  readonly keywordMode: KeywordMode;
  matches(item: unknown): boolean;
}

export class InvalidQueryError extends Error {
  override readonly name = 'InvalidQueryError';
}

function toBound(value: Date | string | null | undefined, field: string): Date | null {
  if (value === null || value === undefined) return null;
  const date = value instanceof Date ? value : parseIsoDate(value);
  if (!date || Number.isNaN(date.getTime())) {
    throw new InvalidQueryError(
      `${field} ${dateRefusal(value, ISO_DATE_REFUSAL)}: ${String(value)}`,
    );
  }
  return date;
}

export function compileQuery(query: MatchQuery): QueryMatcher {
  const source = sourceOfName(query.source);
  if (!source) throw new InvalidQueryError(`unknown source: ${query.source}`);
  const start = toBound(query.start_date, 'start_date');
  const end = toBound(query.end_date, 'end_date');
  const usernames = (query.usernames ?? []).map(authorKey).filter((name) => name !== '');
  const keywords = (query.keywords ?? [])
    .map((keyword) => parseKeyword(keyword, source))
    .filter((keyword) => keyword.kind !== 'text' || keyword.text !== '');
  const keywordMode = query.keyword_mode ?? 'all';
  if (!KEYWORD_MODES.includes(keywordMode))
    throw new InvalidQueryError(`unknown keyword_mode: ${String(keywordMode)}`);
  return new CompiledQuery(source, start, end, usernames, keywords, keywordMode);
}

type UnknownRecord = Record<string, unknown>;

/**
 * Whether a tag is as long as a label may be, so possibly the head of a longer tag cut to it: a
 * miner files a post under its first tag cut to MAX_LABEL_LENGTH characters, and statistics list
 * that label (a Unicode audit: queried as listed, such posts were found in their bucket and then
 * dropped as not matching). UTF-16 units first: they are never fewer than the characters.
 */
function mayBeCut(tag: string): boolean {
  return tag.length >= MAX_LABEL_LENGTH && characterCount(tag) >= MAX_LABEL_LENGTH;
}

function stringField(record: UnknownRecord, key: string): string | undefined {
  const value = record[key];
  return typeof value === 'string' ? value : undefined;
}

class CompiledQuery implements QueryMatcher {
  private readonly usernameSet: ReadonlySet<string>;

  constructor(
    readonly source: Source,
    readonly start: Date | null,
    readonly end: Date | null,
    readonly usernames: readonly string[],
    readonly keywords: readonly ParsedKeyword[],
    readonly keywordMode: KeywordMode,
  ) {
    this.usernameSet = new Set(usernames);
  }

  matches(item: unknown): boolean {
    if (!isRecord(item)) return false;
    const source = stringField(item, 'source');
    if (source === undefined || sourceOfName(source) !== this.source) return false;
    return this.withinDates(item) && this.byAuthor(item) && this.hasKeywords(item);
  }

  private withinDates(item: UnknownRecord): boolean {
    if (!this.start && !this.end) return true;
    const text = stringField(item, 'datetime');
    const datetime = text === undefined ? undefined : parseIsoDate(text);
    if (!datetime) return false;
    const time = datetime.getTime();
    if (this.start && time < this.start.getTime()) return false;
    return !(this.end && time > this.end.getTime());
  }

  private byAuthor(item: UnknownRecord): boolean {
    if (this.usernameSet.size === 0) return true;
    const holder = this.source === 'x' ? item.user : item;
    const author = isRecord(holder) ? stringField(holder, 'username') : undefined;
    return author !== undefined && this.usernameSet.has(authorKey(author));
  }

  private hasKeywords(item: UnknownRecord): boolean {
    if (this.keywords.length === 0) return true;
    const text = this.searchableText(item);
    const holds = (keyword: ParsedKeyword): boolean => {
      switch (keyword.kind) {
        case 'text':
          return text.includes(keyword.text);
        case 'hashtag': {
          // As a label: lower-cased, a tag may grow past the cut (`İ` is two characters then).
          const label = cutLabel(keyword.tag);
          // Matched as a word, in the text's form: the label keeps the miners' (`#j` + U+030C
          // for `#J̌`), and the post may write `#ǰ`.
          const word = composedLowerCase(label);
          return holdsXTag(text, word, mayBeCut(label)) || this.hasHashtag(item, word);
        }
        case 'subreddit':
          return this.subreddits(item).has(keyword.label);
      }
    };
    return this.keywordMode === 'all' ? this.keywords.every(holds) : this.keywords.some(holds);
  }

  /** The item's text as keywords are read: composed (NFC, as parseKeyword reads them), lower-cased. */
  private searchableText(item: UnknownRecord): string {
    if (this.source === 'x') return composedLowerCase(stringField(item, 'text') ?? '');
    // Joined with newlines so that a keyword cannot match across two fields. The deprecated
    // `content` is title and body again: searching it would add only matches across the two.
    return composedLowerCase(
      ['title', 'body'].map((field) => stringField(item, field) ?? '').join('\n'),
    );
  }

  /**
   * Whether the post's hashtag list holds `tag` (lower-case, with `#`), as a label: cut as
   * miners cut the tag they file a post under (cutLabel), so that a label listed at the cut
   * length finds the posts filed under it. A listed tag may lack its `#`.
   */
  private hasHashtag(item: UnknownRecord, tag: string): boolean {
    const tweet = item.tweet;
    if (!isRecord(tweet) || !Array.isArray(tweet.hashtags)) return false;
    return tweet.hashtags.some((listed) => {
      if (typeof listed !== 'string') return false;
      const normalized = composedLowerCase(listed).trim();
      return cutLabel(normalized.startsWith('#') ? normalized : `#${normalized}`) === tag;
    });
  }

  private subreddits(item: UnknownRecord): Set<string> {
    const names = [stringField(item, 'communityName'), stringField(item, 'label')];
    return new Set(
      names
        .filter((name): name is string => name !== undefined)
        .map((name) => composedLowerCase(name).trim().replace(/^\//, ''))
        .map((name) => (name.startsWith('r/') ? name : `r/${name}`)),
    );
  }
}

import { enumError, notANumber } from '../../common/errors/pydantic-errors';
import { ValidationErrorItem } from '../../common/errors/validation-error-item';
import { CONTROL_CHARACTER, FORMAT_CHARACTER } from '../../common/validation/control-characters';
import { decimalNumber } from '../../common/validation/decimal-number';
import { dateRefusal, ISO_DATE_REFUSAL, parseIsoDate } from '../../common/validation/iso-date';
import { isStorableText, STORABLE_TEXT_REFUSAL } from '../../common/validation/storable-text';
import { characterCount, composed } from '../../common/characters';
import { Source, SOURCES } from '../../common/source';
import { normalizeLabel } from '../../network/protocol';
import { Loc } from './desirability.types';

/** Longest task id: ids appear in URLs (`/api/v1/tasks/{id}`), hence also no slashes. */
export const MAX_ID_LENGTH = 80;
/** Longest label or keyword, as everywhere in the network. */
export const MAX_TEXT_LENGTH = 140;

/**
 * Collects every violation of a request, each as pydantic v2 would report it, so that one
 * 422 lists them all.
 */
export class Issues {
  readonly items: ValidationErrorItem[] = [];

  /** Returns undefined, so that a parser can report and give up in one statement. */
  add(loc: Loc, type: string, msg: string, ctx?: Record<string, unknown>): undefined {
    this.items.push({ loc, msg, type, ...(ctx ? { ctx } : {}) });
    return undefined;
  }

  value(loc: Loc, message: string): undefined {
    return this.add(loc, 'value_error', `Value error, ${message}`);
  }

  missing(loc: Loc): undefined {
    return this.add(loc, 'missing', 'Field required');
  }

  stringType(loc: Loc): undefined {
    return this.add(loc, 'string_type', 'Input should be a valid string');
  }

  dictType(loc: Loc): undefined {
    return this.add(loc, 'dict_type', 'Input should be a valid dictionary');
  }

  /** Unknown fields, reported after the known ones, as pydantic does. */
  forbidExtra(object: Record<string, unknown>, allowed: readonly string[], loc: Loc): void {
    for (const key of Object.keys(object)) {
      if (!allowed.includes(key)) {
        this.add([...loc, key], 'extra_forbidden', 'Extra inputs are not permitted');
      }
    }
  }
}

/** `x` or `reddit` in any case (and surrounding spaces); undefined when invalid (reported). */
export function parseSource(value: unknown, loc: Loc, issues: Issues): Source | undefined {
  if (typeof value !== 'string') return issues.stringType(loc);
  const source = value.trim().toLowerCase();
  if ((SOURCES as readonly string[]).includes(source)) return source as Source;
  const refusal = enumError(SOURCES);
  issues.add(loc, refusal.type, refusal.msg, refusal.ctx);
  return undefined;
}

/**
 * A positive, finite number, or a string of one (`decimalNumber`); undefined when invalid
 * (reported). `true` is refused, as integers refuse it, although pydantic's lax mode reads it
 * as 1.0 (docs/decisions.md, "Errors").
 */
export function parseWeight(value: unknown, loc: Loc, issues: Issues): number | undefined {
  value = decimalNumber(value);
  if (typeof value !== 'number') {
    const { type, msg } = notANumber(value);
    return issues.add(loc, type, msg);
  }
  if (!Number.isFinite(value))
    return issues.add(loc, 'finite_number', 'Input should be a finite number');
  if (value <= 0)
    return issues.add(loc, 'greater_than', 'Input should be greater than 0', { gt: 0 });
  return value;
}

/** A job id: 1..80 printable characters, without `/` or `\`, not `.` or `..`. */
export function parseId(value: unknown, loc: Loc, issues: Issues): string | undefined {
  if (typeof value !== 'string') return issues.stringType(loc);
  if (!checkLength(value, MAX_ID_LENGTH, loc, issues)) return undefined;
  if (/[/\\]/.test(value)) return issues.value(loc, "id must not contain '/' or '\\'");
  // A task's URLs hold its id as a path segment, and every URL parser (browsers, fetch, the
  // generated clients) resolves `.` and `..` there, `%2E` too: `/tasks/./dataset` left the
  // task (found by an audit). Tasks stored with such an id before are kept.
  if (value === '.' || value === '..') return issues.value(loc, "id must not be '.' or '..'");
  // Ids are shown in lists, logs and file names: no line breaks, tabs or other controls.
  if (CONTROL_CHARACTER.test(value))
    return issues.value(loc, 'id must be printable: no control characters (CR, LF, TAB, …)');
  // Nor invisible ones: `\u202eabc` showed reversed, `tao-x\u200b` as `tao-x` (a fuzz audit's
  // finding). ZWJ too: an id is looked up, not read. Tasks stored with one before are kept.
  if (FORMAT_CHARACTER.test(value))
    return issues.value(
      loc,
      'id must be printable: no format characters (bidi controls, zero-width characters, …)',
    );
  return value;
}

/**
 * A label, normalized: trimmed and lower-cased; X labels are hashtags (`#tag`), Reddit labels
 * subreddits (`r/name`, also accepted as `/r/name` or `/name`). Null when absent; undefined
 * when invalid (reported). Without a valid platform only the length is checked.
 */
export function parseLabel(
  value: unknown,
  platform: Source | undefined,
  loc: Loc,
  issues: Issues,
): string | null | undefined {
  if (value === null || value === undefined) return null;
  if (typeof value !== 'string') return issues.stringType(loc);
  const text = normalizeLabel(composed(value));
  if (!checkLength(text, MAX_TEXT_LENGTH, loc, issues)) return undefined;
  if (CONTROL_CHARACTER.test(text)) return issues.value(loc, unprintable('label'));
  if (!platform) return undefined;
  const label = canonicalJobLabel(platform, text);
  if (label === undefined) {
    const rule =
      platform === 'x'
        ? 'X labels are hashtags: # followed by the tag, without spaces'
        : 'Reddit labels are subreddits: r/<name> (or /r/<name>, /<name>), without spaces';
    return issues.value(loc, rule);
  }
  return checkLength(label, MAX_TEXT_LENGTH, loc, issues) ? label : undefined;
}

/**
 * The canonical form of a normalized label (see `normalizeLabel`) under its source's rule for
 * job labels; undefined when it breaks the rule.
 */
function canonicalJobLabel(platform: Source, text: string): string | undefined {
  // The full-width sign an input method types is X's `#`, as on-demand reads it (keywords.ts).
  if (platform === 'x') return /^[#＃][^\s#＃]+$/.test(text) ? `#${text.slice(1)}` : undefined;
  const subreddit = /^(?:\/?r\/|\/)([^\s/]+)$/.exec(text);
  return subreddit ? `r/${subreddit[1]}` : undefined;
}

/** A keyword: trimmed, 1..140 characters. Null when absent; undefined when invalid. */
export function parseKeyword(value: unknown, loc: Loc, issues: Issues): string | null | undefined {
  if (value === null || value === undefined) return null;
  if (typeof value !== 'string') return issues.stringType(loc);
  const keyword = composed(value).trim();
  if (!checkLength(keyword, MAX_TEXT_LENGTH, loc, issues)) return undefined;
  if (CONTROL_CHARACTER.test(keyword)) return issues.value(loc, unprintable('keyword'));
  return keyword;
}

/**
 * A job's label and keyword go to miners, into the published vote and into lists: no post's
 * hashtag or search holds an ESC, a NEL or a line break (a Unicode audit registered
 * `#\u001b]0;pwned\u0007x`, listed raw, and `#bitcoin\u0085` beside `#bitcoin`, a second task
 * the duplicate rule missed). Format characters stay (docs/decisions.md, "Format characters in
 * ids").
 */
function unprintable(field: 'label' | 'keyword'): string {
  return `${field} must be printable: no control characters (CR, LF, TAB, ESC, NEL, …)`;
}

/**
 * A date or date-time parseIsoDate reads (no zone = UTC). Null when absent; undefined when invalid.
 */
export function parseDate(value: unknown, loc: Loc, issues: Issues): Date | null | undefined {
  if (value === null || value === undefined) return null;
  if (typeof value !== 'string') return issues.stringType(loc);
  const date = parseIsoDate(value);
  return date ?? issues.value(loc, dateRefusal(value, ISO_DATE_REFUSAL));
}

/**
 * Lengths count characters (code points), as pydantic and Postgres' varchar do; the text must be
 * storable (no U+0000, no unpaired surrogate), refused as every DTO refuses it.
 */
function checkLength(text: string, max: number, loc: Loc, issues: Issues): boolean {
  const length = characterCount(text);
  if (length === 0) {
    issues.add(loc, 'string_too_short', 'String should have at least 1 character', {
      min_length: 1,
    });
    return false;
  }
  if (length > max) {
    issues.add(loc, 'string_too_long', `String should have at most ${max} characters`, {
      max_length: max,
    });
    return false;
  }
  // U+0000 was a 500 at the insert (found by fuzzing); an unpaired surrogate a 500 in jsonb.
  if (!isStorableText(text)) {
    const { type, msg, ctx } = STORABLE_TEXT_REFUSAL;
    issues.add(loc, type, msg, { ...ctx });
    return false;
  }
  return true;
}

/** ISO 8601 dates as the miner protocol and the public API accept them. */

import { DAY_MS } from '../clock/durations';

// A zone is Z or an offset under 24 hours (±HH, ±HHMM, ±HH:MM), as Python's datetime allows:
// `+25:00` or `+23:60` was read as an offset of over a day (found by an audit).
const ISO_DATE =
  /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?)?\s*(Z|[+-](?:[01]\d|2[0-3])(?::?[0-5]\d)?)?$/i;

/**
 * The last instant a date-time may name: RFC 3339 (OpenAPI's `date-time`) has four-digit years,
 * and `toISOString` writes a later instant as `+010000-…`, which clients' parsers refuse. A zone
 * can carry a date at the end of 9999 into 10000 (`9999-12-31T23:59:59-23:59`).
 */
const LAST_INSTANT = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

/**
 * The first: 0001-01-01T00:00:00Z, Python's `datetime.min`, so that what miners (and the
 * original's clients) are sent they can read. Year 0000, or a zone carrying 0001 back into it,
 * is refused as before 0001.
 */
const FIRST_INSTANT = utcInstant(1, 0, 1, 0, 0, 0, 0);

/**
 * Strict ISO 8601 parsing where a value without a zone is UTC (JavaScript's `Date` would read a
 * zoneless date-time as local time, which would make answers depend on the server's zone).
 * Returns undefined for anything that is not a real calendar date, or is outside years 0001 to
 * 9999 in UTC.
 */
export function parseIsoDate(value: string): Date | undefined {
  const instant = instantOf(value);
  return instant === undefined || instant < FIRST_INSTANT || instant > LAST_INSTANT
    ? undefined
    : new Date(instant);
}

/**
 * The inclusive end of a range a client names (on-demand `end_date`): a date alone names its
 * whole day, so it ends at that day's last millisecond (in its zone, UTC without one), as
 * comparisons are `<=`; a date-time is itself. Read as its midnight, a one-day range held no
 * data. Kept within year 9999 (a day in a zone west of UTC would run past it).
 * docs/decisions.md, "A date-only end is the end of its day".
 */
export function parseIsoEndDate(value: string): Date | undefined {
  const date = parseIsoDate(value);
  if (!date || ISO_DATE.exec(value.trim())?.[4] !== undefined) return date;
  return new Date(Math.min(date.getTime() + DAY_MS - 1, LAST_INSTANT));
}

/**
 * The inclusive start of a range a client names (on-demand `start_date`): its millisecond, or
 * the next one when its fraction goes on past the millisecond with more than zeros. A Date holds
 * milliseconds; cut down, `…25.0000001Z` let in items of `…25.000Z`, before the start (a time
 * audit's finding), where every digit given counts (docs/decisions.md, "Dates"). The end is cut
 * down, which keeps it inclusive.
 */
export function parseIsoStartDate(value: string): Date | undefined {
  const date = parseIsoDate(value);
  const beyond = ISO_DATE.exec(value.trim())?.[7]?.slice(3) ?? '';
  return date && /[1-9]/.test(beyond) ? new Date(Math.min(date.getTime() + 1, LAST_INSTANT)) : date;
}

const NANOSECONDS_PER_MS = 1_000_000n;

/**
 * The instant a date names, in nanoseconds since the epoch, to the precision its text gives, for
 * comparing two instants (a start with its end, a start or an expiry with now). The Date that
 * `parse` returns, which is what is stored and sent to miners, cuts a fraction to the
 * millisecond, so compared as Dates `…10:00:00.0000001Z` was not after `…10:00:00Z`: here the
 * fraction's digits past the millisecond are added back. `parse` reads the text as the field
 * means it (parseIsoEndDate for an end: a date alone has no fraction, its end is its last
 * millisecond); a Date, the service's clock, is its millisecond. Undefined where `parse` refuses
 * the text. docs/decisions.md, "Dates".
 */
export function exactInstant(
  value: string | Date,
  parse: (text: string) => Date | undefined = parseIsoDate,
): bigint | undefined {
  if (value instanceof Date) return BigInt(value.getTime()) * NANOSECONDS_PER_MS;
  const date = parse(value);
  if (!date) return undefined;
  const fraction = ISO_DATE.exec(value.trim())?.[7] ?? '';
  return BigInt(date.getTime()) * NANOSECONDS_PER_MS + BigInt(fraction.slice(3).padEnd(6, '0'));
}

/**
 * The forms parseIsoDate reads, as its refusals and the document name them: a subset of ISO
 * 8601, so a refusal says which forms, not "an ISO 8601 date", which `2026-W47`, `20261120` and
 * `2026-324` are (an audit's finding). Its variants (a space for `T`, a comma for the point,
 * lower-case `t` and `z`, white space before the zone) are left unsaid: a message naming fewer
 * forms than are read is still true of every value refused. docs/decisions.md, "Dates".
 */
export const ISO_DATE_FORMS =
  'a date (YYYY-MM-DD) or a date-time (YYYY-MM-DDTHH:MM[:SS[.fraction]], T or a space ' +
  'between date and time, up to 9 fraction digits), with an optional zone (Z, ±HH, ±HHMM or ' +
  '±HH:MM; none is UTC)';

/**
 * What a value parseIsoDate refuses is told (through dateRefusal), wherever such a date is read.
 */
export const ISO_DATE_REFUSAL = `must be ${ISO_DATE_FORMS}, e.g. 2026-11-20 or 2026-11-20T12:00:00Z`;

/**
 * What a value parseRfc3339DateTime refuses is told: its form spelled out, not "an RFC 3339
 * date-time", which a leap second (`23:59:60`) or ten fraction digits are.
 */
export const RFC_3339_DATE_TIME_REFUSAL =
  'must be a date-time YYYY-MM-DDTHH:MM:SS[.fraction] (up to 9 fraction digits) with its ' +
  'UTC offset, Z or ±HH:MM, e.g. 2099-12-31T23:59:59Z';

/**
 * Why a query parameter's date-time has a space where its offset's sign would be: a query string
 * is form-decoded, where `+` stands for a space, so `…T20:30:56+01:00` sent unencoded arrives as
 * `…T20:30:56 01:00`.
 */
const PLUS_IN_QUERY = "a '+' in a query string reads as a space: send it as %2B";

/** A date-time (T, with or without seconds and fraction) and a space, then an offset's digits. */
const SPACE_FOR_OFFSET_SIGN =
  /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)? \d{2}(?::?\d{2})?$/i;

/**
 * What a date-time query parameter's refusal says: RFC_3339_DATE_TIME_REFUSAL through
 * dateRefusal, with the cause (PLUS_IN_QUERY) when a space stands where the offset's sign would
 * be: naming the form alone left a client who wrote the offset right to find out why.
 */
export function queryDateTimeRefusal(value: unknown): string {
  const refusal = dateRefusal(value, RFC_3339_DATE_TIME_REFUSAL);
  return typeof value === 'string' && SPACE_FOR_OFFSET_SIGN.test(value)
    ? `${refusal}; ${PLUS_IN_QUERY}`
    : refusal;
}

/**
 * What a refused date's error says: `expected` (ISO_DATE_REFUSAL or RFC_3339_DATE_TIME_REFUSAL,
 * the form the field takes), unless the value has that form but names an instant outside years
 * 0001 to 9999 in UTC. One message wherever a date is read.
 */
export function dateRefusal(value: unknown, expected: string): string {
  const instant = typeof value === 'string' ? instantOf(value) : undefined;
  if (instant !== undefined && instant > LAST_INSTANT)
    return 'must not be later than 9999-12-31T23:59:59.999999Z once in UTC';
  if (instant !== undefined && instant < FIRST_INSTANT)
    return 'must not be earlier than 0001-01-01T00:00:00Z once in UTC';
  return expected;
}

/** The instant (ms) an ISO 8601 date or date-time names, whatever its year; undefined if none. */
function instantOf(value: string): number | undefined {
  const parts = ISO_DATE.exec(value.trim());
  if (!parts) return undefined;
  const [, year, month, day, hour = '0', minute = '0', second = '0', fraction = '', zone] = parts;
  const milliseconds = Number(fraction.padEnd(3, '0').slice(0, 3));
  const utc = utcInstant(+year, +month - 1, +day, +hour, +minute, +second, milliseconds);
  const check = new Date(utc);
  // Date silently rolls 2024-02-31 over to March; a round trip catches it.
  if (
    check.getUTCFullYear() !== +year ||
    check.getUTCMonth() !== +month - 1 ||
    check.getUTCDate() !== +day ||
    +hour > 23 ||
    +minute > 59 ||
    +second > 59
  ) {
    return undefined;
  }
  return utc - zoneOffsetMinutes(zone) * 60_000;
}

/**
 * RFC 3339's date-time, which OpenAPI's `format: date-time` names: `T` between date and time,
 * seconds, an optional fraction after a point, and `Z` or `±HH:MM` (T and Z in either case, as
 * RFC 3339 allows). Fractions beyond nanoseconds are refused, as parseIsoDate refuses them.
 */
const RFC_3339_DATE_TIME =
  /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?(?:Z|[+-](?:[01]\d|2[0-3]):[0-5]\d)$/i;

/** An RFC 3339 date-time as its instant; undefined for anything else or an impossible date. */
export function parseRfc3339DateTime(value: string): Date | undefined {
  return RFC_3339_DATE_TIME.test(value) ? parseIsoDate(value) : undefined;
}

/**
 * Date.UTC for every four-digit year: Date.UTC reads a year from 0 to 99 as 1900 to 1999, so
 * `0050-01-01` became 1950, which the round trip refused as no date at all ("must be an ISO
 * 8601 date"): a client's `0001-01-01`, ISO 8601 and Python's first day, was told it is not one.
 */
export function utcInstant(
  year: number,
  monthIndex: number,
  day: number,
  hour: number,
  minute: number,
  second: number,
  milliseconds: number,
): number {
  const date = new Date(0);
  date.setUTCFullYear(year, monthIndex, day);
  date.setUTCHours(hour, minute, second, milliseconds);
  return date.getTime();
}

function zoneOffsetMinutes(zone: string | undefined): number {
  if (!zone || zone.toUpperCase() === 'Z') return 0;
  const sign = zone.startsWith('-') ? -1 : 1;
  const digits = zone.slice(1).replace(':', '');
  return sign * (Number(digits.slice(0, 2)) * 60 + Number(digits.slice(2) || '0'));
}

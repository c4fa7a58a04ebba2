/** ISO 8601 dates as the miner protocol and the public API accept them. */

const ISO_DATE =
  /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?)?\s*(Z|[+-]\d{2}(?::?\d{2})?)?$/i;

/**
 * Strict ISO 8601 parsing where a value without a zone is UTC (JavaScript's `Date` would read a
 * zoneless date-time as local time, which would make answers depend on the server's zone).
 * Returns undefined for anything that is not a real calendar date.
 */
export function parseIsoDate(value: string): Date | undefined {
  const parts = ISO_DATE.exec(value.trim());
  if (!parts) return undefined;
  const [, year, month, day, hour = '0', minute = '0', second = '0', fraction = '', zone] = parts;
  const milliseconds = Number(fraction.padEnd(3, '0').slice(0, 3));
  const utc = Date.UTC(+year, +month - 1, +day, +hour, +minute, +second, milliseconds);
  const check = new Date(utc);
  // Date.UTC silently rolls 2024-02-31 over to March; a round trip catches it.
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
  return new Date(utc - zoneOffsetMinutes(zone) * 60_000);
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

function zoneOffsetMinutes(zone: string | undefined): number {
  if (!zone || zone.toUpperCase() === 'Z') return 0;
  const sign = zone.startsWith('-') ? -1 : 1;
  const digits = zone.slice(1).replace(':', '');
  return sign * (Number(digits.slice(0, 2)) * 60 + Number(digits.slice(2) || '0'));
}

/**
 * HTTP-dates (RFC 9110 §5.6.7): the preferred IMF-fixdate a server sends, and the two obsolete
 * forms a recipient must still read (RFC 850 and asctime). Nothing else is a date: `Date.parse`
 * reads `1` as the year 2001 and `2026-12-03` as a date, which would turn a conditional header
 * that is no HTTP-date, and is to be ignored (§13.1.3, §13.1.4), into a condition.
 */

import { utcInstant } from '../validation/iso-date';

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const MONTH = MONTHS.join('|');
const TIME = '(\\d{2}):(\\d{2}):(\\d{2})';
/** `Sun, 06 Nov 1994 08:49:37 GMT` */
const IMF_FIXDATE = new RegExp(
  `^(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun), (\\d{2}) (${MONTH}) (\\d{4}) ${TIME} GMT$`,
);
/** `Sunday, 06-Nov-94 08:49:37 GMT` */
const RFC_850 = new RegExp(
  `^(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday), (\\d{2})-(${MONTH})-(\\d{2}) ${TIME} GMT$`,
);
/** `Sun Nov  6 08:49:37 1994` */
const ASCTIME = new RegExp(
  `^(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) (${MONTH}) ( \\d|\\d{2}) ${TIME} (\\d{4})$`,
);

/**
 * The instant an HTTP-date names, or null when `value` is none (another form, a list, a day or
 * time out of range). The day name is not checked against the date, as the RFC asks of no
 * recipient. An RFC 850 two-digit year more than 50 years ahead of `now` is in the century
 * before (§5.6.7).
 */
export function parseHttpDate(value: string, now: Date): Date | null {
  const text = value.trim();
  let match = IMF_FIXDATE.exec(text);
  if (match) return instant(+match[3], match[2], +match[1], match.slice(4, 7));
  match = RFC_850.exec(text);
  if (match) {
    const year = Math.floor(now.getUTCFullYear() / 100) * 100 + Number(match[3]);
    const date = instant(year, match[2], +match[1], match.slice(4, 7));
    // By the instant, not the year: 31-Dec-76 is more than 50 years after 2026-12-03.
    const fiftyYearsOn = new Date(now);
    fiftyYearsOn.setUTCFullYear(now.getUTCFullYear() + 50);
    if (date && date > fiftyYearsOn)
      return instant(year - 100, match[2], +match[1], match.slice(4, 7));
    return date;
  }
  match = ASCTIME.exec(text);
  if (match) return instant(+match[6], match[1], +match[2].trim(), match.slice(3, 6));
  return null;
}

function instant(year: number, month: string, day: number, time: string[]): Date | null {
  const [hours, minutes, seconds] = time.map(Number);
  const monthIndex = MONTHS.indexOf(month);
  // 60 is a leap second in the grammar (`second = 2DIGIT`, 00-60 in RFC 5322); read as :59.
  if (hours > 23 || minutes > 59 || seconds > 60) return null;
  const date = new Date(
    utcInstant(year, monthIndex, day, hours, minutes, Math.min(seconds, 59), 0),
  );
  // 31 Feb rolls over into March: not a date.
  if (date.getUTCMonth() !== monthIndex || date.getUTCDate() !== day) return null;
  return date;
}

/**
 * `date` as an IMF-fixdate, to the second (`Thu, 03 Dec 2026 14:05:09 GMT`): what a server
 * sends in `Last-Modified` (RFC 9110 §8.8.2).
 */
export function formatHttpDate(date: Date): string {
  return date.toUTCString();
}

/** `date` to the whole second below: what an HTTP-date can say of it. */
export function toWholeSecond(date: Date): Date {
  return new Date(Math.floor(date.getTime() / 1000) * 1000);
}

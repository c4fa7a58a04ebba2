import { formatHttpDate, parseHttpDate, toWholeSecond } from './http-date';

const NOW = new Date('2026-12-03T12:00:00Z');
const NOV_6_1994 = new Date('1994-11-06T08:49:37Z');

describe('HTTP-dates', () => {
  // RFC 9110 §5.6.7's own examples, one per form.
  it.each([
    'Sun, 06 Nov 1994 08:49:37 GMT',
    'Sunday, 06-Nov-94 08:49:37 GMT',
    'Sun Nov  6 08:49:37 1994',
  ])('reads %j', (value) => {
    expect(parseHttpDate(value, NOW)).toEqual(NOV_6_1994);
  });

  it('reads an RFC 850 year more than 50 years ahead as the century before', () => {
    expect(parseHttpDate('Thursday, 01-Jan-76 00:00:00 GMT', NOW)).toEqual(
      new Date('2076-01-01T00:00:00Z'),
    );
    expect(parseHttpDate('Friday, 01-Jan-77 00:00:00 GMT', NOW)).toEqual(
      new Date('1977-01-01T00:00:00Z'),
    );
    // The 50 years run to the instant: 2076-12-31 is past 2076-12-03.
    expect(parseHttpDate('Thursday, 31-Dec-76 00:00:00 GMT', NOW)).toEqual(
      new Date('1976-12-31T00:00:00Z'),
    );
  });

  it.each([
    'garbage',
    '1',
    '',
    '2026-12-03',
    '2026-12-03T12:00:00Z',
    'Sun, 6 Nov 1994 08:49:37 GMT',
    'Sun, 06 Nov 1994 08:49:37 UTC',
    'Sun, 06 Nov 1994 08:49:37 +0000',
    'sun, 06 nov 1994 08:49:37 GMT',
    'Sun, 31 Nov 1994 08:49:37 GMT',
    'Sun, 06 Nov 1994 24:00:00 GMT',
    'Sun, 06 Nov 1994 08:60:00 GMT',
    'Sun, 06 Nov 1994 08:49:37 GMT, Sun, 06 Nov 1994 08:49:37 GMT',
  ])('reads %j as no date', (value) => {
    expect(parseHttpDate(value, NOW)).toBeNull();
  });

  it('writes an IMF-fixdate to the second', () => {
    const date = new Date('2026-12-03T09:05:07.999Z');
    expect(formatHttpDate(date)).toBe('Thu, 03 Dec 2026 09:05:07 GMT');
    expect(toWholeSecond(date)).toEqual(new Date('2026-12-03T09:05:07Z'));
    expect(parseHttpDate(formatHttpDate(date), NOW)).toEqual(toWholeSecond(date));
  });
});

import {
  dateRefusal,
  exactInstant,
  ISO_DATE_REFUSAL,
  parseIsoDate,
  parseIsoEndDate,
  parseIsoStartDate,
  parseRfc3339DateTime,
  queryDateTimeRefusal,
  RFC_3339_DATE_TIME_REFUSAL,
} from './iso-date';

describe('parseIsoDate', () => {
  it('parses dates, date-times, fractions and zones', () => {
    expect(parseIsoDate('2024-05-01')?.toISOString()).toBe('2024-05-01T00:00:00.000Z');
    expect(parseIsoDate('2024-05-01T10:20')?.toISOString()).toBe('2024-05-01T10:20:00.000Z');
    expect(parseIsoDate('2024-05-01T10:20:30.123456')?.toISOString()).toBe(
      '2024-05-01T10:20:30.123Z',
    );
    expect(parseIsoDate('2024-05-01T10:20:30-0130')?.toISOString()).toBe(
      '2024-05-01T11:50:30.000Z',
    );
    expect(parseIsoDate('2024-05-01T10:20:30+00:00')?.toISOString()).toBe(
      '2024-05-01T10:20:30.000Z',
    );
  });

  it('reads the last instant of year 9999 in UTC, and refuses any later one (no RFC 3339 for it)', () => {
    expect(parseIsoDate('9999-12-31T23:59:59.999Z')?.toISOString()).toBe(
      '9999-12-31T23:59:59.999Z',
    );
    expect(parseIsoDate('9999-12-31T23:59:59+23:59')?.toISOString()).toBe(
      '9999-12-31T00:00:59.000Z',
    );
    for (const text of [
      '9999-12-31T23:59:59-23:59',
      '9999-12-31T23:59:59-00:01',
      '9999-12-31T23:30-01',
    ])
      expect(parseIsoDate(text)).toBeUndefined();
    expect(parseRfc3339DateTime('9999-12-31T23:59:59-23:59')).toBeUndefined();
  });

  // Date.UTC reads years 0 to 99 as 19xx: `0050-01-01` was refused as no date at all.
  it('reads years 0001 to 0099 as themselves, and refuses any instant before 0001 in UTC', () => {
    expect(parseIsoDate('0001-01-01')?.toISOString()).toBe('0001-01-01T00:00:00.000Z');
    expect(parseIsoDate('0050-02-28T10:20:30.5Z')?.toISOString()).toBe('0050-02-28T10:20:30.500Z');
    expect(parseIsoDate('0099-12-31T23:59:59-01:00')?.toISOString()).toBe(
      '0100-01-01T00:59:59.000Z',
    );
    expect(parseIsoEndDate('0001-01-01')?.toISOString()).toBe('0001-01-01T23:59:59.999Z');
    expect(parseRfc3339DateTime('0001-01-01T00:00:00Z')?.toISOString()).toBe(
      '0001-01-01T00:00:00.000Z',
    );
    for (const text of [
      '0000-01-01',
      '0000-12-31T23:59:59.999Z',
      '0001-01-01T00:30+01:00',
      '0050-02-29',
    ])
      expect(parseIsoDate(text)).toBeUndefined();
    expect(dateRefusal('0000-06-01', 'expected form')).toBe(
      'must not be earlier than 0001-01-01T00:00:00Z once in UTC',
    );
    expect(dateRefusal('0001-01-01T00:00:00+00:01', 'expected form')).toBe(
      'must not be earlier than 0001-01-01T00:00:00Z once in UTC',
    );
    expect(dateRefusal('0050-02-29', 'expected form')).toBe('expected form');
  });

  it('says why a date past year 9999 is refused, and the expected form for anything else', () => {
    expect(dateRefusal('9999-12-31T23:59:59-23:59', 'expected form')).toBe(
      'must not be later than 9999-12-31T23:59:59.999999Z once in UTC',
    );
    expect(dateRefusal('tomorrow', 'expected form')).toBe('expected form');
    // The last instant itself is not past the limit: refused only for its form (a space for T).
    expect(dateRefusal('9999-12-31 23:59:59.999Z', 'expected form')).toBe('expected form');
    expect(dateRefusal(42, 'expected form')).toBe('expected form');
  });

  it('takes the bound its refusal names: Python’s datetime.max, read to the millisecond', () => {
    expect(parseIsoDate('9999-12-31T23:59:59.999999Z')?.toISOString()).toBe(
      '9999-12-31T23:59:59.999Z',
    );
    expect(parseIsoDate('9999-12-31T23:59:59.999999+00:00')).toBeDefined();
    expect(parseIsoDate('9999-12-31T23:59:59.999999-00:01')).toBeUndefined();
  });

  it('refuses what is not a calendar date', () => {
    for (const text of ['', '2024', '2024-13-01', '2023-02-29', '2024-05-01T24:00', '01/05/2024']) {
      expect(parseIsoDate(text)).toBeUndefined();
    }
  });

  it('refuses minute 60 and second 60, which Date.UTC would carry into the next hour or minute', () => {
    // A leap second (23:59:60) is refused as Python's datetime refuses it, not read as 00:00:00.
    for (const text of ['2024-05-01T10:60', '2024-05-01T10:20:60', '2024-12-31T23:59:60Z']) {
      expect(parseIsoDate(text)).toBeUndefined();
    }
    expect(parseRfc3339DateTime('2024-12-31T23:59:60Z')).toBeUndefined();
  });

  it('refuses offsets of a day or more, and minutes past 59', () => {
    for (const zone of ['+24:00', '-24', '+25:00', '+99:99', '+9999', '+23:60', '-0060']) {
      expect(parseIsoDate(`2026-11-29T00:00:00${zone}`)).toBeUndefined();
    }
    expect(parseIsoDate('2026-11-29T00:00:00+23:59')?.toISOString()).toBe(
      '2026-11-28T00:01:00.000Z',
    );
    expect(parseIsoDate('2026-11-29T00:00:00-2359')?.toISOString()).toBe(
      '2026-11-29T23:59:00.000Z',
    );
  });
});

describe('parseIsoEndDate', () => {
  const end = (value: string) => parseIsoEndDate(value)?.toISOString();

  it("reads a date alone as its day's last millisecond, in UTC without a zone", () => {
    expect(end('2026-12-01')).toBe('2026-12-01T23:59:59.999Z');
    expect(end(' 2026-12-01Z ')).toBe('2026-12-01T23:59:59.999Z');
    expect(end('2026-02-28')).toBe('2026-02-28T23:59:59.999Z');
  });

  it("reads a date with a zone as the end of that zone's day", () => {
    expect(end('2026-12-01+02:00')).toBe('2026-12-01T21:59:59.999Z');
    expect(end('2026-12-01-0500')).toBe('2026-12-02T04:59:59.999Z');
  });

  it('reads a date-time as itself, midnight included', () => {
    expect(end('2026-12-01T00:00')).toBe('2026-12-01T00:00:00.000Z');
    expect(end('2026-12-01T00:00:00Z')).toBe('2026-12-01T00:00:00.000Z');
    expect(end('2026-12-01 12:30:15.5+01:00')).toBe('2026-12-01T11:30:15.500Z');
  });

  it('keeps a day within year 9999 and refuses what parseIsoDate refuses', () => {
    expect(end('9999-12-31')).toBe('9999-12-31T23:59:59.999Z');
    expect(end('9999-12-31-01:00')).toBe('9999-12-31T23:59:59.999Z');
    expect(parseIsoEndDate('2026-02-30')).toBeUndefined();
    expect(parseIsoEndDate('tomorrow')).toBeUndefined();
  });
});

describe('parseIsoStartDate', () => {
  const iso = (value: string) => parseIsoStartDate(value)?.toISOString();

  // Cut down, a start past the millisecond let in items of that millisecond, before it.
  it('reads a start past its millisecond as the next millisecond, and any other as itself', () => {
    expect(iso('2026-12-04T02:21:25.0000001Z')).toBe('2026-12-04T02:21:25.001Z');
    expect(iso('2026-12-04T02:21:25.123456Z')).toBe('2026-12-04T02:21:25.124Z');
    expect(iso('2026-12-04T02:21:25.123000000Z')).toBe('2026-12-04T02:21:25.123Z');
    expect(iso('2026-12-04T02:21:25Z')).toBe('2026-12-04T02:21:25.000Z');
    expect(iso('2026-12-04')).toBe('2026-12-04T00:00:00.000Z');
    expect(iso('9999-12-31T23:59:59.9999999Z')).toBe('9999-12-31T23:59:59.999Z');
    expect(parseIsoStartDate('2026-02-30')).toBeUndefined();
  });
});

describe('parseRfc3339DateTime', () => {
  it('reads RFC 3339 date-times, T and Z in either case', () => {
    expect(parseRfc3339DateTime('2024-05-01T10:20:30Z')?.toISOString()).toBe(
      '2024-05-01T10:20:30.000Z',
    );
    expect(parseRfc3339DateTime('2024-05-01t10:20:30.5z')?.toISOString()).toBe(
      '2024-05-01T10:20:30.500Z',
    );
    expect(parseRfc3339DateTime('2024-05-01T10:20:30-01:30')?.toISOString()).toBe(
      '2024-05-01T11:50:30.000Z',
    );
  });

  it('refuses the ISO 8601 forms RFC 3339 leaves out, and impossible dates', () => {
    for (const text of [
      '2024-05-01',
      '2024-05-01T10:20:30',
      '2024-05-01 10:20:30Z',
      '2024-05-01T10:20Z',
      '2024-05-01T10:20:30+0200',
      '2024-05-01T10:20:30+02',
      '2024-05-01T10:20:30,5Z',
      '2024-05-01T10:20:30+23:60',
      '2024-05-01T10:20:30.Z',
      ' 2024-05-01T10:20:30Z',
      '2023-02-29T00:00:00Z',
    ]) {
      expect(parseRfc3339DateTime(text)).toBeUndefined();
    }
  });
});

// parseIsoDate's Date is cut to the millisecond; comparisons need the digits past it.
describe('exactInstant', () => {
  const ms = (text: string) => BigInt(Date.parse(text)) * 1_000_000n;

  it('is the instant in nanoseconds, the fraction past the millisecond included', () => {
    expect(exactInstant('2026-12-01T10:00:00.0000001Z')).toBe(ms('2026-12-01T10:00:00Z') + 100n);
    expect(exactInstant('2026-12-01T10:00:00.123456789Z')).toBe(
      ms('2026-12-01T10:00:00.123Z') + 456_789n,
    );
    expect(exactInstant('2026-12-01t12:00:00,9995+02:00')).toBe(
      ms('2026-12-01T10:00:00.999Z') + 500_000n,
    );
    expect(exactInstant('2026-12-01T10:00')).toBe(ms('2026-12-01T10:00:00Z'));
    expect(exactInstant(new Date('2026-12-01T10:00:00.004Z'))).toBe(ms('2026-12-01T10:00:00.004Z'));
  });

  it('reads the text with the parser given, and is undefined where it refuses it', () => {
    expect(exactInstant('2026-12-01', parseIsoEndDate)).toBe(ms('2026-12-01T23:59:59.999Z'));
    expect(exactInstant('2026-12-01T23:59:59.9995Z', parseIsoEndDate)).toBe(
      ms('2026-12-01T23:59:59.999Z') + 500_000n,
    );
    expect(exactInstant('2026-12-01T10:00:00.0004Z', parseRfc3339DateTime)).toBe(
      ms('2026-12-01T10:00:00Z') + 400_000n,
    );
    expect(exactInstant('2026-12-01', parseRfc3339DateTime)).toBeUndefined();
    expect(exactInstant('soon')).toBeUndefined();
  });
});

// A refusal names the forms a field takes, not "ISO 8601" or "RFC 3339": `2026-W47`, `20261120`
// and `2026-324` are ISO 8601 dates and were told they are not one (an audit's finding).
describe('the refusals name the forms read', () => {
  it('says a date or date-time of the forms parseIsoDate reads, each of which it reads', () => {
    expect(ISO_DATE_REFUSAL).toBe(
      'must be a date (YYYY-MM-DD) or a date-time (YYYY-MM-DDTHH:MM[:SS[.fraction]], T or a ' +
        'space between date and time, up to 9 fraction digits), with an optional zone (Z, ±HH, ±HHMM or ±HH:MM; none is UTC), e.g. ' +
        '2026-11-20 or 2026-11-20T12:00:00Z',
    );
    for (const date of [
      '2026-11-20',
      '2026-11-20T12:00',
      '2026-11-20 12:00',
      '2026-11-20T12:00:00.123456789',
    ]) {
      for (const zone of ['', 'Z', '+05', '-0530', '+05:30'])
        expect(parseIsoDate(`${date}${zone}`)).toBeDefined();
    }
    for (const other of [
      '2026-W47',
      '2026-W47-5',
      '20261120',
      '2026-324',
      '2026-11-20T12:00:00.1234567890Z',
    ])
      expect(dateRefusal(other, ISO_DATE_REFUSAL)).toBe(ISO_DATE_REFUSAL);
  });

  it('says a date-time with its offset, the form parseRfc3339DateTime reads', () => {
    expect(RFC_3339_DATE_TIME_REFUSAL).toBe(
      'must be a date-time YYYY-MM-DDTHH:MM:SS[.fraction] (up to 9 fraction digits) with its ' +
        'UTC offset, Z or ±HH:MM, e.g. 2099-12-31T23:59:59Z',
    );
    for (const fraction of ['', '.5', '.123456789'])
      for (const zone of ['Z', '+05:30', '-00:00'])
        expect(parseRfc3339DateTime(`2099-12-31T23:59:59${fraction}${zone}`)).toBeDefined();
    // RFC 3339 allows both, the service neither (docs/decisions.md, "Expiry").
    for (const other of ['2016-12-31T23:59:60Z', '2099-12-31T23:59:59.1234567890Z'])
      expect(parseRfc3339DateTime(other)).toBeUndefined();
  });
});

// A query string's `+` is read as a space (form decoding): `…T20:30:56.600+01:00` sent as it is
// arrives as `…T20:30:56.600 01:00`, and the form alone did not tell the client why.
describe('queryDateTimeRefusal', () => {
  const cause = "; a '+' in a query string reads as a space: send it as %2B";

  it('names the cause when a space stands where the offset sign would be', () => {
    for (const value of [
      '2026-12-11T20:30:56.600 01:00',
      '2026-12-11T20:30:56 01:00',
      '2026-12-11t20:30:56,5 0100',
      '2026-12-11T20:30 01',
    ])
      expect(queryDateTimeRefusal(value)).toBe(`${RFC_3339_DATE_TIME_REFUSAL}${cause}`);
  });

  it("is the body fields' refusal for any other value", () => {
    for (const value of [
      '2026-12-11T20:30:56',
      '2026-12-11 20:30:56Z',
      '2026-12-11T20:30:56 ',
      '2026-12-11T20:30:56 Z',
      '2026-12-11 01:00',
      'yesterday',
      42,
    ])
      expect(queryDateTimeRefusal(value)).toBe(RFC_3339_DATE_TIME_REFUSAL);
    expect(queryDateTimeRefusal('9999-12-31T23:59:59-23:59')).toBe(
      dateRefusal('9999-12-31T23:59:59-23:59', RFC_3339_DATE_TIME_REFUSAL),
    );
  });
});

import { parseIsoDate } from './iso-date';

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

  it('refuses what is not a calendar date', () => {
    for (const text of ['', '2024', '2024-13-01', '2023-02-29', '2024-05-01T24:00', '01/05/2024']) {
      expect(parseIsoDate(text)).toBeUndefined();
    }
  });
});

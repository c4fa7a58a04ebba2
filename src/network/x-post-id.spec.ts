import { xPostId, xPostTime } from './x-post-id';

describe(xPostTime.name, () => {
  it('reads the moment a real post id holds', () => {
    expect(xPostTime('1795757939487670279')?.toISOString()).toBe('2024-05-29T10:03:51.000Z');
  });

  it('reads no time from an id older than snowflakes, or one that is not digits', () => {
    for (const id of ['20', '29700859246', '', '-1', '1e18', '0x1f', '12 34', '1'.repeat(21)])
      expect(xPostTime(id)).toBeUndefined();
    expect(xPostTime('29700859247')?.toISOString()).toBe('2010-11-04T01:43:01.738Z');
  });

  it('gives back the time an id was made of, whatever its sequence', () => {
    const time = new Date('2026-11-20T10:00:00.123Z');
    for (const sequence of [0, 1, 0x3fffff])
      expect(xPostTime(xPostId(time, sequence))).toEqual(time);
    expect(xPostId(time, 1)).not.toBe(xPostId(time, 2));
  });
});

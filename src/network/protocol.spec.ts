import {
  bucketEnd,
  bucketStart,
  parseDataSource,
  sourceFromId,
  sourceToId,
  timeBucketId,
} from './protocol';

describe('time buckets', () => {
  it('counts whole hours since the epoch', () => {
    const date = new Date('2024-05-01T12:34:56Z');
    const id = timeBucketId(date);
    expect(id).toBe(Math.floor(date.getTime() / 3_600_000));
    expect(bucketStart(id).toISOString()).toBe('2024-05-01T12:00:00.000Z');
    expect(bucketEnd(id).toISOString()).toBe('2024-05-01T13:00:00.000Z');
    expect(timeBucketId(bucketEnd(id))).toBe(id + 1);
  });
});

describe('sources', () => {
  it('maps REDDIT to 1 and X to 2, both ways', () => {
    expect(sourceToId('REDDIT')).toBe(1);
    expect(sourceToId('X')).toBe(2);
    expect(sourceFromId(1)).toBe('REDDIT');
    expect(sourceFromId('2')).toBe('X');
    expect(sourceFromId(3)).toBeUndefined();
  });

  it('reads the source in any case', () => {
    expect(parseDataSource('reddit')).toBe('REDDIT');
    expect(parseDataSource(' x ')).toBe('X');
    expect(parseDataSource('twitter')).toBeUndefined();
  });
});

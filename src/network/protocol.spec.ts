import { bucketEnd, bucketStart, timeBucketId } from './protocol';

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

import { bucketStart, DataEntity } from '../protocol';
import { checkBucket } from './bucket-check';

const bucket = { time_bucket_id: 500_000, source: 2 as const, label: '#ai' };
const inBucket = new Date(bucketStart(bucket.time_bucket_id).getTime() + 60_000).toISOString();

function entity(uri: string, overrides: Partial<DataEntity> = {}): DataEntity {
  const content = {
    uri,
    datetime: inBucket,
    source: 'X',
    label: '#ai',
    content: `post ${uri} #ai`,
  } as unknown as DataEntity['content'];
  return {
    uri,
    datetime: inBucket,
    source: 'X',
    label: '#ai',
    content_size_bytes: Buffer.byteLength(JSON.stringify(content)),
    content,
    ...overrides,
  };
}

const sizeOf = (entities: DataEntity[]) =>
  entities.reduce((sum, e) => sum + e.content_size_bytes, 0);

describe(checkBucket.name, () => {
  it('scores 1 when every entity belongs and the sizes add up to the claim', () => {
    const entities = [entity('a'), entity('b')];
    expect(checkBucket(bucket, sizeOf(entities), { data_entities: entities })).toEqual({
      score: 1,
      problems: [],
    });
  });

  it('tolerates a small difference between claimed and returned bytes', () => {
    const entities = [entity('a'), entity('b')];
    expect(
      checkBucket(bucket, Math.round(sizeOf(entities) * 1.05), { data_entities: entities }).score,
    ).toBe(1);
  });

  it('scores an over-claim of three times at about a third', () => {
    const entities = [entity('a'), entity('b')];
    const result = checkBucket(bucket, sizeOf(entities) * 3, { data_entities: entities });
    expect(result.score).toBeCloseTo(1 / 3, 2);
    expect(result.problems[0]).toMatch(/claimed/);
  });

  it('does not count entities from another hour, label or source, duplicates, or lying sizes', () => {
    const good = entity('a');
    const entities = [
      good,
      entity('b', { datetime: '2020-01-01T00:00:00Z' }),
      entity('c', { label: '#other' }),
      entity('d', { source: 'REDDIT' }),
      entity('a'),
      entity('e', { content_size_bytes: 99_999 }),
    ];
    const result = checkBucket(bucket, good.content_size_bytes, { data_entities: entities });
    expect(result.score).toBeCloseTo(1 / 6, 5);
  });

  it('scores 0 for an answer without a list', () => {
    expect(checkBucket(bucket, 10, { nope: true }).score).toBe(0);
    expect(checkBucket(bucket, 10, null).score).toBe(0);
  });
});

import { generateCorpus } from '../../devnet/corpus';
import { toWireEntity } from '../../devnet/miner-records';
import { bucketStart, XItem } from '../protocol';
import { WireDataEntity } from '../sn13/entities';
import { checkBucket } from './bucket-check';

const bucket = { timeBucket: 500_000, source: 2 as const, label: '#ai' };
const inBucket = new Date(bucketStart(bucket.timeBucket).getTime() + 60_000).toISOString();
const template = generateCorpus({ seed: 5, size: { x: 20, reddit: 1 } }).items.find(
  (item): item is XItem => item.source === 'X',
)!;

/** A miner's entity for a post in the bucket (or wherever `change` moves it). */
function entity(id: string, change: (item: XItem) => void = () => undefined): WireDataEntity {
  const item = structuredClone(template);
  item.uri = `https://x.com/${item.user.username}/status/${id}`;
  item.tweet.id = id;
  item.datetime = inBucket;
  item.tweet.hashtags = ['#AI'];
  item.label = '#ai';
  change(item);
  return toWireEntity(item);
}

const sizeOf = (entities: WireDataEntity[]) =>
  entities.reduce((sum, e) => sum + e.content_size_bytes, 0);

describe(checkBucket.name, () => {
  it('scores 1 when every entity belongs and the sizes add up to the claim', () => {
    const entities = [entity('1'), entity('2')];
    const result = checkBucket(bucket, sizeOf(entities), entities);
    expect(result).toMatchObject({ score: 1, problems: [] });
    expect(result.items.map(({ item }) => (item as XItem).tweet.id)).toEqual(['1', '2']);
    expect(result.items.map(({ contentBytes }) => contentBytes)).toEqual(
      entities.map((e) => e.content_size_bytes),
    );
  });

  // A liar padded real posts to 1 MB each and made 135 of them a 128 MiB bucket: unknown fields
  // and whitespace pass every check, the item being read without them (a hostile-miner audit).
  it.each([
    [
      'an unknown field',
      (content: string) => content.replace(/}$/, `,"zz":"${'a'.repeat(500_000)}"}`),
    ],
    ['whitespace', (content: string) => content.replace(/}$/, `${' '.repeat(500_000)}}`)],
  ])(
    'counts a record padded with %s at its post’s size, and fails the claim it meets',
    (_, pad) => {
      const entities = [entity('1'), entity('2')].map((honest) => {
        const content = pad(honest.content);
        return { ...honest, content, content_size_bytes: Buffer.byteLength(content) };
      });
      const result = checkBucket(bucket, sizeOf(entities), entities);
      expect(result.items).toHaveLength(2);
      expect(result.score).toBeLessThan(0.5);
      expect(result.problems).toContain(
        "2 records padded far beyond their posts (counted at their posts' size)",
      );
    },
  );

  it('counts a large honest record as it is', () => {
    const long = entity('1', (item) => (item.text = 'a long post '.repeat(2_000)));
    expect(long.content_size_bytes).toBeGreaterThan(20_000);
    expect(checkBucket(bucket, sizeOf([long]), [long])).toMatchObject({ score: 1, problems: [] });
  });

  it('tolerates a small difference between claimed and returned bytes', () => {
    const entities = [entity('1'), entity('2')];
    expect(checkBucket(bucket, Math.round(sizeOf(entities) * 1.05), entities).score).toBe(1);
  });

  // A fidelity audit: the hour in progress grows after the index is sent, and the subnet's
  // validator never fails a bucket for holding more.
  it('costs nothing for more than was claimed', () => {
    const entities = [entity('1'), entity('2')];
    expect(checkBucket(bucket, Math.floor(sizeOf(entities) / 2), entities)).toMatchObject({
      score: 1,
      problems: [],
    });
  });

  it('scores an over-claim of three times at about a third', () => {
    const entities = [entity('1'), entity('2')];
    const result = checkBucket(bucket, sizeOf(entities) * 3, entities);
    expect(result.score).toBeCloseTo(1 / 3, 2);
    expect(result.problems[0]).toMatch(/claimed/);
  });

  it('does not count entities from another hour or label, duplicates, lying sizes or bad records', () => {
    const good = entity('1');
    const entities = [
      good,
      entity('2', (item) => (item.datetime = '2020-01-01T00:00:00.000Z')),
      entity('3', (item) => (item.tweet.hashtags = ['#other'])),
      { ...entity('4'), source: 1 },
      entity('1'),
      { ...entity('5'), content_size_bytes: 99_999 },
      { ...entity('6'), content: '{"text": "no user"}' },
    ];
    const result = checkBucket(bucket, good.content_size_bytes, entities);
    expect(result.score).toBeCloseTo(1 / 7, 5);
    expect(result.items).toHaveLength(1);
    expect(result.problems[0]).toBe('6 of 7 entities do not belong to the bucket');
  });

  it('drops and counts entities whose uri does not name the post, so they are never stored', () => {
    const good = entity('1');
    const entities = [
      good,
      entity('2', (item) => (item.uri = 'javascript:alert(2)//x.com/a/status/2')),
      entity('3', (item) => (item.uri = `https://x.com/${item.user.username}/status/4`)),
    ];
    const result = checkBucket(bucket, good.content_size_bytes, entities);
    expect(result.items.map(({ item }) => (item as XItem).tweet.id)).toEqual(['1']);
    expect(result.score).toBeCloseTo(1 / 3, 5);
    expect(result.problems[0]).toBe('2 of 3 entities do not belong to the bucket');
  });

  it('keeps uris in canonical form and counts a respelled repeat as a duplicate', () => {
    const good = entity(
      '1',
      (item) => (item.uri = item.uri.replace('https://x.com/', 'https://twitter.com/') + '?s=20'),
    );
    const entities = [
      good,
      entity('1'),
      entity('2', (item) => (item.uri = `https://evil.example/${item.user.username}/status/2`)),
    ];
    const result = checkBucket(bucket, good.content_size_bytes, entities);
    expect(result.items.map(({ item }) => item.uri)).toEqual([
      `https://x.com/${template.user.username}/status/1`,
    ]);
    expect(result.problems[0]).toBe('2 of 3 entities do not belong to the bucket');
  });

  it('scores an empty answer 1 when nothing was claimed, else 0', () => {
    expect(checkBucket(bucket, 0, []).score).toBe(1);
    expect(checkBucket(bucket, 10, []).score).toBe(0);
  });
});

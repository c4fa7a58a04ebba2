import { RedditItem, XItem } from '../network/protocol';
import { generateCorpus } from './corpus';
import { recordOf, toWireEntity, withRecordSize } from './miner-records';

/**
 * The entities and records a subnet 13 miner serves, byte for byte where the gateway reads them
 * (wire spec §2; common/data.py `DataEntity`, pydantic's JSON). A devnet that wrote them in
 * another form would test the gateway's readers against answers no miner sends.
 */

const corpus = generateCorpus({
  seed: 3,
  now: new Date('2024-06-01T00:00:00Z'),
  size: { x: 5, reddit: 5 },
});
const x = corpus.items.find((item): item is XItem => item.source === 'X')!;
const reddit = corpus.items.find((item): item is RedditItem => item.source === 'REDDIT')!;

describe(toWireEntity.name, () => {
  it('declares the size of the record in UTF-8 bytes, not in characters', () => {
    const item: XItem = { ...x, text: 'café ☕ 𝕏 — naïve' };
    const entity = toWireEntity(item);
    expect(entity.content).toContain('café');
    expect(entity.content_size_bytes).toBe(Buffer.byteLength(entity.content));
    expect(entity.content_size_bytes).toBeGreaterThan(entity.content.length);
    expect(withRecordSize(item).content_size_bytes).toBe(entity.content_size_bytes);
  });

  it('writes no label as null and a label as {value}', () => {
    expect(toWireEntity({ ...x, label: null }).label).toBeNull();
    expect(toWireEntity({ ...x, label: '#bitcoin' }).label).toEqual({ value: '#bitcoin' });
  });

  it('writes the datetime as pydantic v2 does: Z, no fraction at zero, else microseconds', () => {
    expect(toWireEntity({ ...x, datetime: '2024-05-20T10:11:12.000Z' }).datetime).toBe(
      '2024-05-20T10:11:12Z',
    );
    expect(toWireEntity({ ...x, datetime: '2024-05-20T10:11:12.500Z' }).datetime).toBe(
      '2024-05-20T10:11:12.500000Z',
    );
  });
});

describe(recordOf.name, () => {
  it('stores an X post at its minute, its null fields left out (pydantic v2, exclude None)', () => {
    const item: XItem = {
      ...x,
      datetime: '2024-05-20T10:11:12.500Z',
      tweet: { ...x.tweet, in_reply_to_user_id: null },
    };
    const record = JSON.parse(recordOf(item)) as Record<string, unknown>;
    expect(record.timestamp).toBe('2024-05-20T10:11:00Z');
    expect(record).not.toHaveProperty('in_reply_to_user_id');
    expect(Object.values(record)).not.toContain(null);
  });

  it("stores a Reddit item at its minute, in Python's isoformat, with RedditContent's aliases in order", () => {
    const item: RedditItem = { ...reddit, createdAt: '2024-05-20T10:11:12.000Z' };
    const text = recordOf(item);
    const record = JSON.parse(text) as Record<string, unknown>;
    expect(record.createdAt).toBe('2024-05-20T10:11:00+00:00');
    expect(Object.keys(record)).toEqual([
      'id',
      'url',
      'username',
      'communityName',
      'body',
      'createdAt',
      'dataType',
      'title',
      'parentId',
      'media',
      'is_nsfw',
      'score',
      'upvote_ratio',
      'num_comments',
    ]);
    // Python's json.dumps: ", " and ": " separators.
    expect(text.startsWith(`{"id": "${item.id}", "url": `)).toBe(true);
  });
});

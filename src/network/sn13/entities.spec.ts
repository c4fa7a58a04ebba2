import { generateCorpus } from '../../devnet/corpus';
import { toWireEntity } from '../../devnet/miner-records';
import { DataItem, RedditItem, XItem } from '../protocol';
import { convertContent, convertEntity } from './entities';
import { sourceOfName } from './sources';

const corpus = generateCorpus({ seed: 3, size: { x: 300, reddit: 200 } });
const xItem = corpus.items.find(
  (item): item is XItem => item.source === 'X' && item.media.length > 0,
)!;
const post = corpus.items.find(
  (item): item is RedditItem => item.source === 'REDDIT' && item.dataType === 'post',
)!;

type Json = Record<string, unknown>;

/** The wire entity of `item`, with `change` applied to the entity or to its parsed record. */
function entity(item: DataItem, change: (entity: Json, record: Json) => void = () => undefined) {
  const wire = toWireEntity(item) as unknown as Json;
  const record = JSON.parse(wire.content as string) as Json;
  change(wire, record);
  return { ...wire, content: JSON.stringify(record) };
}

describe(convertEntity.name, () => {
  it('maps every stored record of the corpus back to the item it was made from', () => {
    for (const item of corpus.items) {
      const converted = convertEntity(toWireEntity(item), sourceOfName(item.source)!);
      expect(converted?.item).toEqual(item);
      expect(converted?.contentBytes).toBe(converted?.declaredBytes);
    }
  });

  it('reads the record of the minute-rounded timestamp but keeps the entity datetime', () => {
    const wire = toWireEntity(xItem);
    const record = JSON.parse(wire.content) as { timestamp: string };
    expect(record.timestamp).toMatch(/:00Z$/);
    expect(convertEntity(wire, 'x')?.item.datetime).toBe(xItem.datetime);
  });

  it('reads the nested shape some miners store for X, and fills what a record lacks with null', () => {
    const nested = {
      uri: xItem.uri,
      datetime: '2024-05-29T10:03:51.250000+00:00',
      source: 2,
      label: null,
      content: JSON.stringify({
        content: 'gm #TAO',
        url: xItem.uri,
        user: { username: 'someone' },
        tweet: { hashtags: ['#TAO'], like_count: 3 },
        media: [{ url: 'https://video.twimg.com/tweet_video/abc.mp4', type: 'animated_gif' }],
      }),
      content_size_bytes: 0,
    };
    const item = convertEntity(nested, 'x')?.item as XItem;
    expect(item).toMatchObject({
      datetime: '2024-05-29T10:03:51.250Z',
      label: '#tao',
      content: 'gm #TAO',
      user: { username: 'someone', display_name: null, verified: null },
      tweet: { id: xItem.tweet.id, like_count: 3, retweet_count: null, is_retweet: null },
      media: [{ url: 'https://video.twimg.com/tweet_video/abc.mp4', type: 'animated_gif' }],
    });
  });

  it('tells photos, videos and GIFs apart by their host paths', () => {
    const urls = [
      'https://pbs.twimg.com/media/abc.jpg',
      'https://video.twimg.com/ext_tw_video/1/pu/vid/720x1280/abc.mp4',
      'https://video.twimg.com/tweet_video/abc.mp4',
    ];
    const item = convertEntity(
      entity(xItem, (_, record) => (record.media = urls)),
      'x',
    )?.item as XItem;
    expect(item.media.map((media) => media.type)).toEqual(['photo', 'video', 'animated_gif']);
  });

  it('joins a Reddit post title and body into content, as the item shapes do', () => {
    expect(convertEntity(toWireEntity(post), 'reddit')?.item).toMatchObject({
      title: post.title,
      content: post.body === '' ? post.title : `${post.title}\n\n${post.body}`,
      createdAt: post.datetime,
    });
  });

  it('gives every Reddit item both title and parentId: null for the one its kind lacks', () => {
    expect(convertEntity(toWireEntity(post), 'reddit')?.item).toMatchObject({ parentId: null });
    const comment = entity(post, (_, record) => {
      record.dataType = 'comment';
      record.parentId = post.id;
      delete record.title;
    });
    expect(convertEntity(comment, 'reddit')?.item).toMatchObject({
      dataType: 'comment',
      title: null,
      parentId: post.id,
      content: post.body,
    });
  });

  it.each<[string, DataItem, (entity: Json, record: Json) => void]>([
    ['of another source', xItem, (wire) => (wire.source = 1)],
    ['without uri', xItem, (wire) => delete wire.uri],
    ['with an unreadable datetime', xItem, (wire) => (wire.datetime = 'yesterday')],
    ['with a negative size', xItem, (wire) => (wire.content_size_bytes = -1)],
    [
      'whose record has another url',
      xItem,
      (_, record) => (record.url = 'https://x.com/a/status/1'),
    ],
    ['whose record has no username', xItem, (_, record) => delete record.username],
    ['whose record has no text', xItem, (_, record) => (record.text = 42)],
    ['whose hashtags are not strings', xItem, (_, record) => (record.tweet_hashtags = [1])],
    ['whose media is not a list of URLs', xItem, (_, record) => (record.media = 'a.jpg')],
    ['whose record has no id', post, (_, record) => delete record.id],
    ['whose community lacks r/', post, (_, record) => (record.communityName = 'Bitcoin')],
    ['whose data type is unknown', post, (_, record) => (record.dataType = 'video')],
    ['whose body is not text', post, (_, record) => (record.body = null)],
  ])('refuses an entity %s', (_, item, change) => {
    expect(convertEntity(entity(item, change), sourceOfName(item.source)!)).toBeUndefined();
  });

  it.each([null, 42, 'entity', [], { content: '{' }])('refuses %p without throwing', (value) => {
    expect(convertEntity(value, 'x')).toBeUndefined();
  });

  it('refuses content that is not a JSON object', () => {
    const wire = { ...toWireEntity(xItem), content: '[1, 2]' };
    expect(convertEntity(wire, 'x')).toBeUndefined();
    expect(convertEntity({ ...wire, content: 'not json' }, 'x')).toBeUndefined();
  });

  it('reports the declared and the true size of the record', () => {
    const wire = { ...toWireEntity(xItem), content_size_bytes: 3 };
    expect(convertEntity(wire, 'x')).toMatchObject({
      declaredBytes: 3,
      contentBytes: Buffer.byteLength(wire.content),
    });
  });
});

describe(convertContent.name, () => {
  it('maps a bare stored record to its item, uri and time taken from the record (to the minute)', () => {
    for (const item of corpus.items) {
      const { content } = toWireEntity(item);
      const converted = convertContent(content, sourceOfName(item.source)!);
      const minute = new Date(item.datetime);
      minute.setUTCSeconds(0, 0);
      expect(converted?.item).toEqual({
        ...item,
        datetime: minute.toISOString(),
        ...(item.source === 'REDDIT' ? { createdAt: minute.toISOString() } : {}),
      });
      expect(converted?.contentBytes).toBe(Buffer.byteLength(content));
    }
  });

  it('refuses what is not a record of the source, or lacks its url or time', () => {
    const { content } = toWireEntity(xItem);
    const record = JSON.parse(content) as Json;
    expect(convertContent(content, 'reddit')).toBeUndefined();
    expect(convertContent(42, 'x')).toBeUndefined();
    expect(convertContent('not json', 'x')).toBeUndefined();
    expect(convertContent(JSON.stringify({ ...record, url: undefined }), 'x')).toBeUndefined();
    expect(convertContent(JSON.stringify({ ...record, timestamp: 'soon' }), 'x')).toBeUndefined();
  });
});

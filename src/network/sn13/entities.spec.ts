import { generateCorpus } from '../../devnet/corpus';
import { toWireEntity } from '../../devnet/miner-records';
import { DataItem, RedditItem, XItem } from '../protocol';
import { convertContent, convertEntity } from './entities';
import { xPostId } from '../x-post-id';
import { MAX_RECORD_VALUES } from './miner-json';
import { sourceOfName } from '../sources';

const corpus = generateCorpus({ seed: 3, size: { x: 300, reddit: 200 } });
const xItem = corpus.items.find(
  (item): item is XItem =>
    item.source === 'X' && item.media !== null && item.tweet.view_count !== null,
)!;
const post = corpus.items.find(
  (item): item is RedditItem => item.source === 'REDDIT' && item.dataType === 'post',
)!;

type Json = Record<string, unknown>;

/** A real post's id and the moment it holds: ms = (id >> 22) + 1288834974657. */
const REAL_ID = '1795757939487670279';
const REAL_ID_TIME = '2024-05-29T10:03:51.000Z';

/** The corpus X post under tweet id `id`, dated `datetime`. */
function postOfId(id: string, datetime: string): XItem {
  const uri = `https://x.com/${xItem.user.username}/status/${id}`;
  return { ...xItem, uri, datetime, tweet: { ...xItem.tweet, id } };
}

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

  // The record keeps the post's own time, to the minute: an entity dated elsewhere re-dates the
  // post into a query's range (an audit's finding: a Reddit item answered with `datetime` in the
  // range and `createdAt` a month before it).
  it("refuses an entity dated outside its record's minute, of either source", () => {
    for (const item of [xItem, post]) {
      const source = sourceOfName(item.source)!;
      const minute = Math.floor(Date.parse(item.datetime) / 60_000) * 60_000;
      const dated = (time: number) =>
        entity(item, (wire) => {
          wire.datetime = new Date(time).toISOString();
        });
      expect(convertEntity(dated(minute), source)?.item.datetime).toBe(
        new Date(minute).toISOString(),
      );
      expect(convertEntity(dated(minute + 59_999), source)).toBeDefined();
      expect(convertEntity(dated(minute + 60_000), source)).toBeUndefined();
      expect(convertEntity(dated(minute - 1), source)).toBeUndefined();
      expect(convertEntity(dated(minute - 30 * 86_400_000), source)).toBeUndefined();
    }
  });

  // An X post's id is a snowflake holding when it was posted; a record and entity that agree
  // with each other could still re-date a real post into any range (an audit's finding: this
  // post, sent dated 2026-11-20, was kept for a 2026-11-20 query).
  it("refuses an X post dated outside its id's minute, by entity or by record", () => {
    const dated = (time: string) => entity(postOfId(REAL_ID, time));
    expect(convertEntity(dated(REAL_ID_TIME), 'x')?.item.datetime).toBe(REAL_ID_TIME);
    expect(convertEntity(dated('2024-05-29T10:03:00.000Z'), 'x')).toBeDefined();
    expect(convertEntity(dated('2024-05-29T10:03:59.999Z'), 'x')).toBeDefined();
    expect(convertEntity(dated('2026-11-20T10:00:00.000Z'), 'x')).toBeUndefined();
    expect(convertEntity(dated('2024-05-29T10:04:00.000Z'), 'x')).toBeUndefined();
    expect(convertEntity(dated('2024-05-29T10:02:59.999Z'), 'x')).toBeUndefined();
    const content = (time: string) => toWireEntity(postOfId(REAL_ID, time)).content;
    expect(convertContent(content(REAL_ID_TIME), 'x')?.item.datetime).toBe(REAL_ID_TIME);
    expect(convertContent(content('2026-11-20T10:00:00.000Z'), 'x')).toBeUndefined();
  });

  it('leaves unchecked the time of an X id that is no snowflake (posted before November 2010)', () => {
    for (const id of ['20', '29700859246']) {
      const old = postOfId(id, '2026-11-20T10:00:00.000Z');
      expect(convertEntity(entity(old), 'x')?.item.datetime).toBe(old.datetime);
    }
    const first = postOfId('29700859247', '2026-11-20T10:00:00.000Z');
    expect(convertEntity(entity(first), 'x')).toBeUndefined();
  });

  // Left out or made no date, the record's time could not hold the entity's to the minute.
  it('refuses a record that keeps no time of its own, or one that is no date, but for the nested shape', () => {
    const withTime = (time: unknown) =>
      entity(xItem, (_, record) => {
        if (time === undefined) delete record.timestamp;
        else record.timestamp = time;
      });
    expect(convertEntity(withTime(undefined), 'x')).toBeUndefined();
    expect(convertEntity(withTime('x'), 'x')).toBeUndefined();
    expect(convertEntity(withTime(null), 'x')).toBeUndefined();
    const reddit = entity(post, (_, record) => {
      delete record.createdAt;
    });
    expect(convertEntity(reddit, 'reddit')).toBeUndefined();
  });

  it('drops U+0000 and replaces unpaired surrogates in every string of the item', () => {
    const wire = entity(xItem, (_, record) => {
      record.text = 'a\u0000b \ud800 \udc00 🚀';
      record.user_display_name = '\udc00Bob\u0000';
      record.tweet_hashtags = ['#tao\u0000', '#ok'];
    });
    // JSON.stringify writes them as `\u0000`, `\ud800`: the escapes Postgres refuses in jsonb.
    expect(wire.content).toContain('\\u0000');
    const item = convertEntity(wire, 'x')?.item as XItem;
    expect(item.text).toBe('ab \ufffd \ufffd 🚀');
    expect(item.content).toBe(item.text);
    expect(item.user.display_name).toBe('\ufffdBob');
    expect(item.tweet.hashtags).toEqual(['#tao', '#ok']);
    expect(item.label).toBe('#tao');
    const comment = entity(post, (_, record) => {
      record.body = 'x\ud83d';
    });
    expect((convertContent(comment.content, 'reddit')?.item as RedditItem).body).toBe('x\ufffd');
  });

  it('files an X post whose first tag is a cashtag under the hashtag, as miners do', () => {
    const wire = entity(xItem, (_, record) => {
      record.tweet_hashtags = ['$AAPL', '#stocks'];
    });
    expect(convertEntity(wire, 'x')?.item.label).toBe('#aapl');
  });

  it('reads the nested shape some miners store for X, and fills what a record lacks with null', () => {
    // A post of the moment its id holds (to the second, plus a fraction).
    const { uri } = postOfId(REAL_ID, REAL_ID_TIME);
    const nested = {
      uri,
      datetime: '2024-05-29T10:03:51.250000+00:00',
      source: 2,
      label: null,
      content: JSON.stringify({
        content: 'gm #TAO',
        url: uri,
        user: { username: 'someone', user_blue_verified: true },
        tweet: { hashtags: ['#TAO'], like_count: 3, view_count: 90, language: 'en' },
        media: [{ url: 'https://video.twimg.com/tweet_video/abc.mp4', type: 'animated_gif' }],
      }),
      content_size_bytes: 0,
    };
    const item = convertEntity(nested, 'x')?.item as XItem;
    expect(item).toMatchObject({
      text: 'gm #TAO',
      datetime: '2024-05-29T10:03:51.250Z',
      label: '#tao',
      content_size_bytes: Buffer.byteLength(nested.content),
      user: {
        username: 'someone',
        display_name: null,
        verified: null,
        user_blue_verified: true,
        user_location: null,
      },
      tweet: {
        id: REAL_ID,
        like_count: 3,
        view_count: 90,
        language: 'en',
        retweet_count: null,
        bookmark_count: null,
        is_retweet: null,
        quoted_tweet_id: null,
      },
      media: ['https://video.twimg.com/tweet_video/abc.mp4'],
      content: 'gm #TAO',
    });
  });

  it('answers every hosted-API field of a record with only the required ones, as null', () => {
    const bare = entity(xItem, (_, record) => {
      for (const key of Object.keys(record))
        if (!['username', 'text', 'url', 'timestamp', 'tweet_hashtags'].includes(key))
          delete record[key];
    });
    const item = convertEntity(bare, 'x')?.item as XItem;
    expect(item.media).toBeNull();
    expect(item.tweet.id).toBe(xItem.tweet.id);
    const { id, hashtags, ...tweet } = item.tweet;
    const { username, ...user } = item.user;
    expect([id, username, hashtags]).toEqual([
      xItem.tweet.id,
      xItem.user.username,
      xItem.tweet.hashtags,
    ]);
    for (const value of [...Object.values(tweet), ...Object.values(user)]) expect(value).toBeNull();
    expect(Object.keys(tweet)).toHaveLength(14);
    expect(Object.keys(user)).toHaveLength(10);
  });

  it('reads mistyped optional fields as null rather than refusing the record', () => {
    const item = convertEntity(
      entity(xItem, (_, record) => {
        record.view_count = '12k';
        record.language = 7;
        record.user_blue_verified = 'yes';
      }),
      'x',
    )?.item as XItem;
    expect(item.tweet).toMatchObject({ view_count: null, language: null });
    // Counts are integers a reader takes exactly: a fraction or an unsafe integer is no count.
    const inexact = convertEntity(
      entity(xItem, (_, record) => {
        record.like_count = 2.5;
        record.retweet_count = 2 ** 60;
      }),
      'x',
    )?.item as XItem;
    expect(inexact.tweet).toMatchObject({ like_count: null, retweet_count: null });
    expect(item.user.user_blue_verified).toBeNull();
  });

  it('keeps media as the URLs the record lists, [] as [], and null when it has none', () => {
    const urls = [
      'https://pbs.twimg.com/media/abc.jpg',
      'https://video.twimg.com/tweet_video/x.mp4',
    ];
    const withMedia = entity(xItem, (_, record) => (record.media = urls));
    expect((convertEntity(withMedia, 'x')?.item as XItem).media).toEqual(urls);
    const without = entity(xItem, (_, record) => delete record.media);
    expect((convertEntity(without, 'x')?.item as XItem).media).toBeNull();
    // Passed on as the record has it, never made up (the document says which is which).
    const empty = entity(xItem, (_, record) => (record.media = []));
    expect((convertEntity(empty, 'x')?.item as XItem).media).toEqual([]);
  });

  it('gives content_size_bytes the true byte length of the record, not the declared one', () => {
    const wire = {
      ...entity(xItem, (_, record) => (record.text = 'ünïcödé ✓')),
      content_size_bytes: 3,
    };
    expect(convertEntity(wire, 'x')?.item.content_size_bytes).toBe(Buffer.byteLength(wire.content));
    expect(Buffer.byteLength(wire.content)).toBeGreaterThan(wire.content.length);
  });

  it('reads the scores and media of a Reddit record, null where it has none or they are out of range', () => {
    const scored = entity(post, (_, record) => {
      Object.assign(record, { media: ['https://i.redd.it/a.jpeg'], is_nsfw: true, score: -3 });
      Object.assign(record, { upvote_ratio: 0.5, num_comments: 12 });
    });
    expect(convertEntity(scored, 'reddit')?.item).toMatchObject({
      media: ['https://i.redd.it/a.jpeg'],
      is_nsfw: true,
      score: -3,
      upvote_ratio: 0.5,
      num_comments: 12,
    });
    // A post every voter upvoted has a ratio of 1, one every voter downvoted 0: both are ratios.
    for (const ratio of [0, 1]) {
      const whole = entity(post, (_, record) => (record.upvote_ratio = ratio));
      expect(convertEntity(whole, 'reddit')?.item).toMatchObject({ upvote_ratio: ratio });
    }
    const bare = entity(post, (_, record) => {
      for (const key of ['media', 'is_nsfw', 'score', 'num_comments']) delete record[key];
      record.upvote_ratio = 1.5;
    });
    expect(convertEntity(bare, 'reddit')?.item).toMatchObject({
      media: null,
      is_nsfw: null,
      score: null,
      upvote_ratio: null,
      num_comments: null,
    });
  });

  it('joins a Reddit post title and body into content, as the item shapes do', () => {
    expect(convertEntity(toWireEntity(post), 'reddit')?.item).toMatchObject({
      title: post.title,
      content: post.body === '' ? post.title : `${post.title}\n\n${post.body}`,
      createdAt: post.createdAt,
    });
  });

  it('reads an empty title as none: content is the body alone', () => {
    const untitled = entity(post, (_, record) => (record.title = ''));
    expect(convertEntity(untitled, 'reddit')?.item).toMatchObject({
      title: null,
      content: post.body,
    });
  });

  it('files a Reddit item under its community lower-cased, whatever the case of its r/', () => {
    const upper = entity(post, (_, record) => (record.communityName = 'R/Bitcoin'));
    expect(convertEntity(upper, 'reddit')?.item.label).toBe('r/bitcoin');
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
    ['with a fractional size', xItem, (wire) => (wire.content_size_bytes = 1.5)],
    ['with a size as text', xItem, (wire) => (wire.content_size_bytes = '100')],
    [
      'with an empty uri',
      xItem,
      (wire, record) => {
        wire.uri = '';
        record.url = '';
      },
    ],
    [
      'whose record has another url',
      xItem,
      (_, record) => (record.url = 'https://x.com/a/status/1'),
    ],
    ['whose record has no username', xItem, (_, record) => delete record.username],
    ['whose record has no text', xItem, (_, record) => (record.text = 42)],
    ['whose hashtags are not strings', xItem, (_, record) => (record.tweet_hashtags = [1])],
    ['whose media is not a list of URLs', xItem, (_, record) => (record.media = 'a.jpg')],
    ['whose media list holds something else', xItem, (_, record) => (record.media = [1])],
    ['whose media list holds an empty URL', xItem, (_, record) => (record.media = [''])],
    ['whose Reddit media is not a list', post, (_, record) => (record.media = 'a.jpg')],
    ['whose record has no id', post, (_, record) => delete record.id],
    ['whose community lacks r/', post, (_, record) => (record.communityName = 'Bitcoin')],
    ['whose community is a bare r/', post, (_, record) => (record.communityName = 'r/')],
    ['whose title is not text', post, (_, record) => (record.title = 7)],
    ['whose parentId is not text', post, (_, record) => (record.parentId = 7)],
    ['whose data type is unknown', post, (_, record) => (record.dataType = 'video')],
    ['whose body is not text', post, (_, record) => (record.body = null)],
    ['whose record has no createdAt', post, (_, record) => delete record.createdAt],
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
  it("maps a bare stored record to its item, uri from the record, time from an X post's id or the record (to the minute)", () => {
    for (const item of corpus.items) {
      const { content } = toWireEntity(item);
      const converted = convertContent(content, sourceOfName(item.source)!);
      const minute = new Date(item.datetime);
      minute.setUTCSeconds(0, 0);
      // The corpus's X ids hold their posts' times, to the second as X's are.
      expect(converted?.item).toEqual(
        item.source === 'X'
          ? item
          : { ...item, datetime: minute.toISOString(), createdAt: minute.toISOString() },
      );
      expect(converted?.contentBytes).toBe(Buffer.byteLength(content));
      // Nothing declares a bare content's size: its true length stands for it.
      expect(converted?.declaredBytes).toBe(converted?.contentBytes);
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

  it('refuses a record padded past its bound of values, and an entity around one', () => {
    const wire = toWireEntity(xItem);
    const record = JSON.parse(wire.content) as Json;
    const padded = (values: number) =>
      JSON.stringify({ ...record, pad: Array.from({ length: values }, () => ({})) });
    expect(convertContent(padded(100), 'x')).toBeDefined();
    expect(convertEntity({ ...wire, content: padded(100) }, 'x')).toBeDefined();

    expect(convertContent(padded(MAX_RECORD_VALUES), 'x')).toBeUndefined();
    expect(convertEntity({ ...wire, content: padded(MAX_RECORD_VALUES) }, 'x')).toBeUndefined();
  });

  // A bare record keeps only the minute; dated to it, a post of 05:32:20 was missed by a
  // start_date of 05:32:20 and answered an end_date of 05:32:10 (an audit's finding).
  it("dates a bare X record to its id's second, as a live answer and the hosted API do", () => {
    const posted = '2026-12-05T05:32:20.000Z';
    const id = xPostId(new Date('2026-12-05T05:32:20.750Z'), 7);
    const converted = convertContent(toWireEntity(postOfId(id, posted)).content, 'x');
    expect(converted?.item.datetime).toBe(posted);
    expect(Object.keys(converted!.item)).toEqual(Object.keys(xItem));
    // A record of another minute than its id's is still refused, not re-dated.
    const { content } = toWireEntity(postOfId(id, '2026-12-05T05:33:00.000Z'));
    expect(convertContent(content, 'x')).toBeUndefined();
    // An id that holds no time leaves the record's minute.
    const old = toWireEntity(postOfId('20', '2026-12-05T05:32:20.000Z')).content;
    expect(convertContent(old, 'x')?.item.datetime).toBe('2026-12-05T05:32:00.000Z');
  });
});

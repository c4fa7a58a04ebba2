import { XItem } from '../protocol';
import { redditItemOf, xItemOf } from './records';
import { xContentFields } from '../x-content';

const ITEM: XItem = {
  text: 'Halving soon #bitcoin $btc',
  content: 'Halving soon #bitcoin $btc',
  datetime: '2026-11-20T10:15:42.000Z',
  uri: 'https://x.com/satoshi_fan/status/1859000000000000001',
  source: 'X',
  label: '#bitcoin',
  content_size_bytes: 1234,
  media: ['https://pbs.twimg.com/media/abc.jpg'],
  tweet: {
    id: '1859000000000000001',
    like_count: 12,
    retweet_count: 3,
    reply_count: 1,
    quote_count: 0,
    view_count: 420,
    bookmark_count: 2,
    language: 'en',
    hashtags: ['#bitcoin', '$btc'],
    is_retweet: false,
    is_reply: true,
    is_quote: false,
    conversation_id: '1858999999999999999',
    in_reply_to_user_id: '42',
    in_reply_to_username: 'someone',
    quoted_tweet_id: null,
  },
  user: {
    id: '1001',
    username: 'satoshi_fan',
    display_name: 'Satoshi Fan',
    verified: false,
    user_blue_verified: true,
    user_description: 'numbers go up',
    user_location: null,
    profile_image_url: 'https://pbs.twimg.com/profile_images/1.jpg',
    cover_picture_url: null,
    followers_count: 100,
    following_count: 50,
  },
};

describe('xContentFields', () => {
  it('writes the XContent fields in the model order, the timestamp as given', () => {
    const fields = xContentFields(ITEM, 'T');
    expect(Object.keys(fields).slice(0, 6)).toEqual([
      'username',
      'text',
      'url',
      'timestamp',
      'tweet_hashtags',
      'media',
    ]);
    expect(fields.timestamp).toBe('T');
  });

  it('reads back as the same item (xItemOf)', () => {
    const record = JSON.parse(
      JSON.stringify(xContentFields(ITEM, '2026-11-20T10:15:00Z')),
    ) as Record<string, unknown>;
    const place = { uri: ITEM.uri, datetime: ITEM.datetime, contentBytes: 1234 };
    expect(xItemOf(record, place)).toEqual(ITEM);
  });
});

describe(xItemOf.name, () => {
  const place = { uri: ITEM.uri, datetime: ITEM.datetime, contentBytes: 1234 };
  const recordWith = (fields: Record<string, unknown>) => ({
    ...(JSON.parse(JSON.stringify(xContentFields(ITEM, '2026-11-20T10:15:00Z'))) as object),
    ...fields,
  });

  it('gives the handle without the `@` some scrapers store, as the item shape documents it', () => {
    const item = xItemOf(
      recordWith({ username: '@satoshi_fan', in_reply_to_username: '@someone' }),
      place,
    );
    expect(item?.user.username).toBe('satoshi_fan');
    expect(item?.tweet.in_reply_to_username).toBe('someone');
  });

  it('reads the reply target of the nested shape (`tweet.in_reply_to`), its handle without `@`', () => {
    // EnhancedXContent.to_api_response in data-universe nests it so.
    const nested = {
      uri: ITEM.uri,
      content: ITEM.text,
      user: { username: '@satoshi_fan' },
      tweet: {
        id: ITEM.tweet.id,
        is_reply: true,
        in_reply_to: { user_id: '42', username: '@bob' },
      },
    };
    const item = xItemOf(nested, place);
    expect(item?.tweet).toMatchObject({
      is_reply: true,
      in_reply_to_user_id: '42',
      in_reply_to_username: 'bob',
    });
  });

  it('files the post under its first tag cut to 140 code points, as miners cut it', () => {
    const astral = '\u{1D41B}';
    const item = xItemOf(recordWith({ tweet_hashtags: [`#${astral.repeat(150)}`] }), place);
    expect(item?.label).toBe(`#${astral.repeat(139)}`);
  });

  it('refuses a record whose username is a bare `@`', () => {
    expect(xItemOf(recordWith({ username: '@' }), place)).toBeUndefined();
  });

  it('leaves out counts below 0, which no post or account has', () => {
    const item = xItemOf(
      recordWith({ like_count: -5, view_count: -1, user_followers_count: -100 }),
      place,
    );
    expect(item?.tweet).toMatchObject({ like_count: null, view_count: null, retweet_count: 3 });
    expect(item?.user).toMatchObject({ followers_count: null, following_count: 50 });
  });
});

describe(redditItemOf.name, () => {
  const uri = 'https://www.reddit.com/r/bitcoin/comments/abc123/halving/';
  const record = (fields: Record<string, unknown>) => ({
    id: 't3_abc123',
    url: uri,
    username: 'satoshi_fan',
    communityName: 'r/Bitcoin',
    body: 'Halving soon',
    title: 'Halving',
    createdAt: '2026-11-20T10:15:00Z',
    dataType: 'post',
    parentId: null,
    ...fields,
  });
  const place = { uri, datetime: '2026-11-20T10:15:00.000Z', contentBytes: 200 };

  it('keeps a score below 0 (downvoted), and leaves out a comment count below 0', () => {
    const item = redditItemOf(record({ score: -7, num_comments: -2 }), place);
    expect(item).toMatchObject({ score: -7, num_comments: null });
  });
});

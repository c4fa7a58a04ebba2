import { currentItemShape, StoredItemShape } from './legacy-items';
import { DataItem, RedditItem, XItem } from './protocol';

/** An X item as releases before the hosted-API shapes stored it. */
const LEGACY_X = {
  uri: 'https://x.com/alice/status/1',
  datetime: '2026-11-01T10:20:30.000Z',
  source: 'X',
  label: '#bitcoin',
  content: 'gm #Bitcoin',
  user: {
    username: 'alice',
    display_name: 'Alice',
    id: '7',
    verified: false,
    followers_count: 10,
    following_count: 2,
  },
  tweet: {
    id: '1',
    like_count: 3,
    retweet_count: 0,
    reply_count: 0,
    quote_count: 0,
    hashtags: ['#Bitcoin'],
    is_retweet: false,
    is_reply: false,
    is_quote: false,
    conversation_id: '1',
  },
  media: [{ url: 'https://pbs.twimg.com/media/a.jpg', type: 'photo' }],
} as const satisfies StoredItemShape;

/** A Reddit comment as the first releases stored it: no `title` at all. */
const LEGACY_COMMENT = {
  uri: 'https://www.reddit.com/r/Bitcoin/comments/abc/comment/def/',
  // The entity's time, obfuscated to the minute as miners store it; createdAt is the record's.
  datetime: '2026-11-01T09:05:00.000Z',
  source: 'REDDIT',
  label: 'r/bitcoin',
  content: 'A reply',
  id: 't1_def',
  url: 'https://www.reddit.com/r/Bitcoin/comments/abc/comment/def/',
  username: 'dave',
  communityName: 'r/Bitcoin',
  body: 'A reply',
  createdAt: '2026-11-01T09:05:10.000Z',
  dataType: 'comment',
  parentId: 't3_abc',
} as const;

describe(currentItemShape.name, () => {
  it('answers an X item of the earlier shape in the current one, what it lacked as null', () => {
    const item = currentItemShape(LEGACY_X) as XItem;
    expect(item).toEqual({
      text: 'gm #Bitcoin',
      datetime: LEGACY_X.datetime,
      uri: LEGACY_X.uri,
      source: 'X',
      label: '#bitcoin',
      content_size_bytes: null,
      tweet: {
        ...LEGACY_X.tweet,
        view_count: null,
        bookmark_count: null,
        language: null,
        in_reply_to_user_id: null,
        in_reply_to_username: null,
        quoted_tweet_id: null,
      },
      user: {
        ...LEGACY_X.user,
        user_blue_verified: null,
        user_description: null,
        user_location: null,
        profile_image_url: null,
        cover_picture_url: null,
      },
      media: ['https://pbs.twimg.com/media/a.jpg'],
      content: 'gm #Bitcoin',
    });
    expect(currentItemShape({ ...LEGACY_X, media: [] }).media).toBeNull();
  });

  it('answers a Reddit item of an earlier shape with title and the newer fields null', () => {
    const item = currentItemShape(LEGACY_COMMENT as unknown as StoredItemShape) as RedditItem;
    // Every field the earlier shape kept is passed on as it was, each in its own place.
    expect(item).toEqual({
      uri: LEGACY_COMMENT.uri,
      datetime: LEGACY_COMMENT.datetime,
      source: 'REDDIT',
      label: 'r/bitcoin',
      id: 't1_def',
      url: LEGACY_COMMENT.url,
      username: 'dave',
      communityName: 'r/Bitcoin',
      body: 'A reply',
      createdAt: LEGACY_COMMENT.createdAt,
      dataType: 'comment',
      title: null,
      parentId: 't3_abc',
      content_size_bytes: null,
      media: null,
      is_nsfw: null,
      score: null,
      upvote_ratio: null,
      num_comments: null,
      content: 'A reply',
    });
    // A post's content is its title and body: the body is passed on alone.
    const post = currentItemShape({
      ...LEGACY_COMMENT,
      dataType: 'post',
      title: 'Heading',
      parentId: null,
      content: 'Heading\n\nA reply',
    } as unknown as StoredItemShape) as RedditItem;
    expect(post).toMatchObject({
      title: 'Heading',
      body: 'A reply',
      content: 'Heading\n\nA reply',
    });
  });

  it('takes the `@` off the handles of X items stored before handles were normalized', () => {
    const current = currentItemShape(LEGACY_X) as XItem;
    const stored: XItem = {
      ...current,
      content_size_bytes: 120,
      user: { ...current.user, username: '@alice' },
      tweet: { ...current.tweet, in_reply_to_username: '@bob' },
    };
    const read = currentItemShape(stored) as XItem;
    expect(read.user.username).toBe('alice');
    expect(read.tweet.in_reply_to_username).toBe('bob');
    const legacy = currentItemShape({
      ...LEGACY_X,
      user: { ...LEGACY_X.user, username: '@alice' },
    });
    expect((legacy as XItem).user.username).toBe('alice');
  });

  it('leaves the fields of an item of the current shape as they are, in their declared order', () => {
    const current = currentItemShape(LEGACY_X);
    const sized: DataItem = { ...current, content_size_bytes: 120 };
    const read = currentItemShape(sized);
    expect(read).toEqual(sized);
    expect(Object.keys(read)).toEqual(Object.keys(sized));
  });

  it('answers counts that are not safe integers as null, as records are read from miners', () => {
    const current = currentItemShape(LEGACY_X) as XItem;
    const stored: XItem = {
      ...current,
      content_size_bytes: 120,
      tweet: { ...current.tweet, like_count: 1.5, view_count: 2 ** 63, reply_count: 7 },
      user: { ...current.user, followers_count: -(2 ** 60) },
    };
    const read = currentItemShape(stored) as XItem;
    expect(read.tweet).toMatchObject({ like_count: null, view_count: null, reply_count: 7 });
    expect(read.user.followers_count).toBeNull();
    expect(read.user.following_count).toBe(2);
    const legacy = currentItemShape({
      ...LEGACY_X,
      tweet: { ...LEGACY_X.tweet, retweet_count: 0.5 },
    }) as XItem;
    expect(legacy.tweet.retweet_count).toBeNull();
    const reddit = currentItemShape({
      ...(currentItemShape(LEGACY_COMMENT as unknown as StoredItemShape) as RedditItem),
      content_size_bytes: 80,
      score: 2.5,
      num_comments: 3,
    }) as RedditItem;
    expect(reddit).toMatchObject({ score: null, num_comments: 3 });
  });
});

import { isValidItem } from './item-schema';
import { RedditItem, XItem } from './protocol';

function xItem(): XItem {
  return {
    uri: 'https://x.com/tensor_monk/status/1795757939487670279',
    datetime: '2024-05-29T10:03:51.000Z',
    source: 'X',
    label: '#solana',
    content: 'Is cold storage overrated? #solana #bitcoin',
    user: {
      username: 'tensor_monk',
      display_name: 'Tensor Monk',
      id: '1213764735',
      verified: false,
      followers_count: 6956,
      following_count: 683,
    },
    tweet: {
      id: '1795757939487670279',
      like_count: 211,
      retweet_count: 28,
      reply_count: 16,
      quote_count: 0,
      hashtags: ['#solana', '#bitcoin'],
      is_retweet: false,
      is_reply: false,
      is_quote: false,
      conversation_id: '1795757939487670279',
    },
    media: [{ url: 'https://pbs.twimg.com/media/KPxY1I2PbFmRU0G.jpg', type: 'photo' }],
  };
}

function redditComment(): RedditItem {
  return {
    uri: 'https://www.reddit.com/r/Bitcoin/comments/x36hg8/comment/rkag9am/',
    datetime: '2024-05-08T18:39:20.000Z',
    source: 'REDDIT',
    label: 'r/bitcoin',
    content: 'Great write-up. Just read a long thread on wallet and bitcoin.',
    id: 't1_rkag9am',
    url: 'https://www.reddit.com/r/Bitcoin/comments/x36hg8/comment/rkag9am/',
    username: 'chain_watcher90',
    communityName: 'r/Bitcoin',
    body: 'Great write-up. Just read a long thread on wallet and bitcoin.',
    createdAt: '2024-05-08T18:39:20.000Z',
    dataType: 'comment',
    parentId: 't3_x36hg8',
  };
}

function redditPost(): RedditItem {
  return {
    ...redditComment(),
    uri: 'https://www.reddit.com/r/Bitcoin/comments/x36hg8/cold_storage/',
    url: 'https://www.reddit.com/r/Bitcoin/comments/x36hg8/cold_storage/',
    id: 't3_x36hg8',
    title: 'Cold storage',
    content: 'Cold storage\n\nWhich wallet do you use?',
    body: 'Which wallet do you use?',
    dataType: 'post',
    parentId: undefined,
  };
}

type Json = Record<string, unknown>;

/** A deep copy of `item` with `change` applied to it (or to one of its nested records). */
function altered(item: XItem | RedditItem, change: (copy: Json) => void): Json {
  const copy = structuredClone(item) as unknown as Json;
  change(copy);
  return copy;
}

const JUNK: unknown[] = [
  null,
  undefined,
  0,
  42,
  Number.NaN,
  '',
  'https://x.com/a/status/1',
  true,
  [],
  [xItem()],
  {},
  () => xItem(),
  Symbol('item'),
  new Date(),
];

describe(isValidItem.name, () => {
  it('accepts an X post of the documented shape, with or without media', () => {
    expect(isValidItem(xItem(), 'X')).toBe(true);
    expect(
      isValidItem(
        altered(xItem(), (copy) => delete copy.media),
        'X',
      ),
    ).toBe(true);
    expect(isValidItem({ ...xItem(), media: [] }, 'X')).toBe(true);
    expect(
      isValidItem({ ...xItem(), label: null, tweet: { ...xItem().tweet, hashtags: [] } }, 'X'),
    ).toBe(true);
  });

  it('accepts Reddit posts and comments of the documented shape', () => {
    expect(isValidItem(redditComment(), 'REDDIT')).toBe(true);
    expect(isValidItem(redditPost(), 'REDDIT')).toBe(true);
  });

  it('accepts any ISO 8601 form of the datetime that the query matcher accepts', () => {
    for (const datetime of ['2024-05-29', '2024-05-29T10:03', '2024-05-29T10:03:51+02:00']) {
      expect(isValidItem({ ...xItem(), datetime }, 'X')).toBe(true);
    }
  });

  it('refuses an item asked for under the other source', () => {
    expect(isValidItem(xItem(), 'REDDIT')).toBe(false);
    expect(isValidItem(redditPost(), 'X')).toBe(false);
  });

  it('refuses an item whose source field disagrees with the query, even in another case', () => {
    expect(isValidItem({ ...xItem(), source: 'x' }, 'X')).toBe(false);
    expect(isValidItem({ ...xItem(), source: 'REDDIT' }, 'X')).toBe(false);
    expect(isValidItem({ ...redditPost(), source: 'X' }, 'REDDIT')).toBe(false);
  });

  describe.each([
    ['uri', undefined],
    ['uri', ''],
    ['uri', 7],
    ['datetime', undefined],
    ['datetime', 1716977031000],
    ['datetime', 'yesterday'],
    ['datetime', '2024-02-30T10:00:00Z'],
    ['source', undefined],
    ['label', undefined],
    ['label', 3],
    ['content', undefined],
    ['content', null],
    ['content', ['text']],
  ])('fields every item carries: %s = %p', (field, value) => {
    it('makes an X post invalid', () => {
      expect(
        isValidItem(
          altered(xItem(), (copy) => (copy[field] = value)),
          'X',
        ),
      ).toBe(false);
    });

    it('makes a Reddit item invalid', () => {
      const item = altered(redditComment(), (copy) => (copy[field] = value));
      expect(isValidItem(item, 'REDDIT')).toBe(false);
    });
  });

  it.each([
    ['user', undefined],
    ['user', 'tensor_monk'],
    ['user', null],
    ['user', []],
    ['user.username', undefined],
    ['user.username', ''],
    ['user.username', 12],
    ['tweet', undefined],
    ['tweet', '1795757939487670279'],
    ['tweet.id', undefined],
    ['tweet.id', 1795757939487670279],
    ['tweet.hashtags', undefined],
    ['tweet.hashtags', '#solana'],
    ['tweet.hashtags', ['#solana', 5]],
    ['media', null],
    ['media', { url: 'https://pbs.twimg.com/media/a.jpg' }],
    ['media', ['https://pbs.twimg.com/media/a.jpg']],
    ['media', [{ type: 'photo' }]],
  ])('refuses an X post whose %s is %p', (path, value) => {
    const item = altered(xItem(), (copy) => {
      const [first, second] = path.split('.');
      if (second === undefined) copy[first] = value;
      else (copy[first] as Json)[second] = value;
    });
    expect(isValidItem(item, 'X')).toBe(false);
  });

  it.each([
    ['id', undefined],
    ['id', ''],
    ['id', 3],
    ['url', undefined],
    ['url', null],
    ['username', undefined],
    ['username', ''],
    ['communityName', undefined],
    ['communityName', 'Bitcoin'],
    ['communityName', 5],
    ['body', undefined],
    ['body', null],
    ['dataType', undefined],
    ['dataType', 'thread'],
    ['dataType', 'POST'],
  ])('refuses a Reddit item whose %s is %p', (field, value) => {
    const item = altered(redditComment(), (copy) => (copy[field] = value));
    expect(isValidItem(item, 'REDDIT')).toBe(false);
  });

  it('accepts the subreddit prefix in any case', () => {
    expect(isValidItem({ ...redditPost(), communityName: 'R/Bitcoin' }, 'REDDIT')).toBe(true);
  });

  it('refuses junk without throwing', () => {
    for (const value of JUNK) {
      expect(() => isValidItem(value, 'X')).not.toThrow();
      expect(() => isValidItem(value, 'REDDIT')).not.toThrow();
      expect(isValidItem(value, 'X')).toBe(false);
      expect(isValidItem(value, 'REDDIT')).toBe(false);
    }
  });

  it('refuses junk nested where records are expected without throwing', () => {
    const nested = [
      { ...xItem(), user: 42 },
      { ...xItem(), tweet: null },
      { ...xItem(), tweet: { ...xItem().tweet, hashtags: null } },
      { ...xItem(), media: [null] },
      { ...xItem(), datetime: { toString: () => '2024-05-29' } },
    ];
    for (const item of nested) {
      expect(() => isValidItem(item, 'X')).not.toThrow();
      expect(isValidItem(item, 'X')).toBe(false);
    }
  });
});

import { RedditItem, timeBucketId, XItem } from '../network/protocol';
import { assignHoldings, DEFAULT_CORPUS_SIZE, floorToHour, generateCorpus } from './corpus';
import { MinerStore } from './miner-store';
import { toWireEntity } from './miner-records';
import { xPostTime } from '../network/x-post-id';

const now = new Date('2024-06-01T00:00:00Z');
const DAY_MS = 86_400_000;

describe('generateCorpus', () => {
  const corpus = generateCorpus({ seed: 7, now });
  const xPosts = corpus.items.filter((item): item is XItem => item.source === 'X');
  const redditItems = corpus.items.filter((item): item is RedditItem => item.source === 'REDDIT');

  it('is the same for the same seed and now', () => {
    expect(generateCorpus({ seed: 7, now })).toEqual(corpus);
  });

  it('differs for another seed', () => {
    const other = generateCorpus({ seed: 8, now });
    expect(other.items.map((item) => item.uri)).not.toEqual(corpus.items.map((item) => item.uri));
  });

  it('defaults now to the current hour', () => {
    const defaulted = generateCorpus({ seed: 7, size: { x: 1, reddit: 1 } });
    expect(defaulted.now.getTime()).toBe(floorToHour(new Date()).getTime());
  });

  it('has the default size and unique uris', () => {
    expect(xPosts).toHaveLength(DEFAULT_CORPUS_SIZE.x);
    expect(redditItems).toHaveLength(DEFAULT_CORPUS_SIZE.reddit);
    expect(new Set(corpus.items.map((item) => item.uri)).size).toBe(corpus.items.length);
  });

  it('spreads items over the 30 days before now', () => {
    const times = corpus.items.map((item) => Date.parse(item.datetime));
    expect(Math.max(...times)).toBeLessThan(now.getTime());
    expect(Math.min(...times)).toBeGreaterThan(now.getTime() - 30 * DAY_MS);
    expect(Math.min(...times)).toBeLessThan(now.getTime() - 25 * DAY_MS);
  });

  it('labels X posts with their first hashtag, lower-cased, or null', () => {
    for (const post of xPosts) {
      expect(post.label).toBe(post.tweet.hashtags[0]?.toLowerCase() ?? null);
      for (const tag of post.tweet.hashtags) expect(post.text).toContain(tag);
      expect(post.content).toBe(post.text);
      expect(post.uri).toBe(`https://x.com/${post.user.username}/status/${post.tweet.id}`);
    }
    const counts = xPosts.map((post) => post.tweet.hashtags.length);
    expect(counts.filter((count) => count === 0).length).toBeGreaterThan(100);
    expect(counts.filter((count) => count >= 2).length).toBeGreaterThan(100);
    const labels = new Set(xPosts.map((post) => post.label));
    expect(labels.size).toBeGreaterThanOrEqual(25);
  });

  // The gateway drops an X post dated away from the time its id holds (x-post-id.ts).
  it("gives every X post a snowflake id that holds the post's time", () => {
    for (const post of xPosts) expect(xPostTime(post.tweet.id)?.toISOString()).toBe(post.datetime);
  });

  it('skews label popularity', () => {
    const bitcoin = xPosts.filter((post) => post.label === '#bitcoin').length;
    const nba = xPosts.filter((post) => post.label === '#nba').length;
    expect(bitcoin).toBeGreaterThan(5 * nba);
  });

  it('answers comments to posts of the same subreddit, after them', () => {
    const posts = new Map(
      redditItems.filter((item) => item.dataType === 'post').map((post) => [post.id, post]),
    );
    const comments = redditItems.filter((item) => item.dataType === 'comment');
    expect(posts.size).toBeGreaterThan(500);
    expect(comments.length).toBeGreaterThan(500);
    for (const comment of comments) {
      const post = posts.get(comment.parentId ?? '');
      expect(post?.communityName).toBe(comment.communityName);
      expect(Date.parse(comment.datetime)).toBeGreaterThanOrEqual(Date.parse(post?.datetime ?? ''));
      expect(comment.title).toBeNull();
      expect(comment.content).toBe(comment.body);
    }
    for (const post of posts.values()) {
      expect(post.label).toBe(post.communityName.toLowerCase());
      expect(post.content.startsWith(post.title ?? '?')).toBe(true);
      expect(post.parentId).toBeNull();
    }
  });

  it('sizes every item as its stored record', () => {
    for (const item of corpus.items)
      expect(item.content_size_bytes).toBe(Buffer.byteLength(toWireEntity(item).content));
  });

  it('gives most records the fields newer scrapers add, and leaves them null on some', () => {
    const share = <T>(items: readonly T[], has: (item: T) => boolean) =>
      items.filter(has).length / items.length;
    const viewed = share(xPosts, (post) => post.tweet.view_count !== null);
    expect(viewed).toBeGreaterThan(0.6);
    expect(viewed).toBeLessThan(0.9);
    for (const post of xPosts.filter((post) => post.tweet.view_count === null)) {
      expect(post.tweet.language).toBeNull();
      expect(post.user.user_blue_verified).toBeNull();
      expect(post.user.profile_image_url).toBeNull();
    }
    const replies = xPosts.filter((post) => post.tweet.is_reply && post.tweet.language !== null);
    expect(replies.length).toBeGreaterThan(50);
    for (const reply of replies)
      expect(reply.tweet.in_reply_to_username).toEqual(expect.any(String));
    expect(share(xPosts, (post) => post.tweet.quoted_tweet_id !== null)).toBeGreaterThan(0.02);
    expect(share(xPosts, (post) => post.media !== null)).toBeGreaterThan(0.15);

    const scored = share(redditItems, (item) => item.score !== null);
    expect(scored).toBeGreaterThan(0.6);
    expect(scored).toBeLessThan(0.9);
    for (const comment of redditItems.filter((item) => item.dataType === 'comment'))
      expect([comment.upvote_ratio, comment.num_comments]).toEqual([null, null]);
    const posts = redditItems.filter((item) => item.dataType === 'post' && item.score !== null);
    for (const post of posts) expect(post.upvote_ratio).toBeGreaterThan(0.5);
    expect(posts.some((post) => post.media !== null)).toBe(true);
  });

  it('has about 200 authors', () => {
    const authors = new Set([
      ...xPosts.map((post) => post.user.username),
      ...redditItems.map((item) => item.username),
    ]);
    expect(authors.size).toBeGreaterThan(150);
    expect(authors.size).toBeLessThanOrEqual(200);
  });
});

describe('posts whose queried tag is not their first', () => {
  // Miners file an X post under its first tag only: a query for #bitcoin that reads the #bitcoin
  // buckets misses "#crypto #bitcoin". The corpus must hold such posts, recent ones included.
  const laterTagged = (posts: XItem[], tag: string): XItem[] =>
    posts.filter(
      (post) =>
        post.label !== tag && post.tweet.hashtags.some((each) => each.toLowerCase() === tag),
    );

  it.each([1, 5, 7, 11])('carries each common tag after another one (seed %i)', (seed) => {
    const corpus = generateCorpus({ seed, now });
    const posts = corpus.items.filter((item): item is XItem => item.source === 'X');
    for (const tag of ['#bitcoin', '#crypto', '#ai', '#tao']) {
      const later = laterTagged(posts, tag);
      expect(later.length).toBeGreaterThan(20);
      const lastDay = later.filter((post) => now.getTime() - Date.parse(post.datetime) < DAY_MS);
      expect(lastDay.length).toBeGreaterThan(0);
    }
    const cryptoThenBitcoin = posts.filter(
      (post) => post.label === '#crypto' && post.tweet.hashtags[1]?.toLowerCase() === '#bitcoin',
    );
    expect(cryptoThenBitcoin.length).toBeGreaterThan(5);
  });

  it("are filed by a miner's index under their first tag only", () => {
    const corpus = generateCorpus({ seed: 7, now, size: { x: 900, reddit: 600 } });
    const posts = corpus.items.filter((item): item is XItem => item.source === 'X');
    const later = laterTagged(posts, '#bitcoin');
    expect(later.length).toBeGreaterThan(20);
    const store = new MinerStore(corpus.items);
    for (const post of later) {
      const timeBucket = timeBucketId(new Date(post.datetime));
      const first = post.tweet.hashtags[0];
      const under = (label: string) =>
        store.bucket({ source: 2, label, timeBucket }).map((entity) => entity.uri);
      expect(post.label).toBe(first.toLowerCase());
      expect(under(first)).toContain(post.uri);
      expect(under('#bitcoin')).not.toContain(post.uri);
    }
  });
});

describe('assignHoldings', () => {
  const corpus = generateCorpus({ seed: 3, now, size: { x: 600, reddit: 400 } });

  it('gives every item to at least one miner and about half of them', () => {
    const holdings = assignHoldings(corpus, 8);
    const holders = new Array<number>(corpus.items.length).fill(0);
    for (const indexes of holdings) for (const index of indexes) holders[index]++;
    expect(Math.min(...holders)).toBeGreaterThanOrEqual(1);
    const average = holders.reduce((sum, count) => sum + count, 0) / holders.length / 8;
    expect(average).toBeGreaterThan(0.4);
    expect(average).toBeLessThan(0.6);
  });

  it('makes miners overlap without holding the same items', () => {
    const [first, second] = assignHoldings(corpus, 2).map((indexes) => new Set(indexes));
    const shared = [...first].filter((index) => second.has(index)).length;
    expect(shared).toBeGreaterThan(0);
    expect(shared).toBeLessThan(first.size);
  });

  it('is deterministic', () => {
    expect(assignHoldings(corpus, 5)).toEqual(assignHoldings(corpus, 5));
  });

  it('gives a single miner everything', () => {
    expect(assignHoldings(corpus, 1)[0]).toHaveLength(corpus.items.length);
  });
});

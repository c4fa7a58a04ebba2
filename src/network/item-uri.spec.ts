import {
  canonicalItem,
  canonicalUri,
  itemKey,
  MAX_AUTHOR_LENGTH,
  MAX_URI_LENGTH,
} from './item-uri';
import { DataItem, RedditItem, XItem } from './protocol';

const xItem = (uri: string, id = '12', username = 'Alice') =>
  ({ source: 'X', uri, tweet: { id }, user: { username } }) as unknown as XItem;

const redditItem = (uri: string, id = 't3_abc', dataType = 'post') =>
  ({
    source: 'REDDIT',
    uri,
    url: uri,
    id,
    dataType,
    communityName: 'r/Bitcoin',
    username: 'satoshi',
  }) as unknown as RedditItem;

/** Whether canonicalUri accepts the item's uri as naming it. */
const uriAgrees = (item: XItem | RedditItem) => canonicalUri(item) !== undefined;

describe('canonicalUri: which uris name their item', () => {
  it('wants an X uri to be a web address carrying the tweet id as its status', () => {
    expect(uriAgrees(xItem('https://x.com/Alice/status/12'))).toBe(true);
    expect(uriAgrees(xItem('https://x.com/Alice/status/12', '13'))).toBe(false);
    expect(uriAgrees(xItem('not a url'))).toBe(false);
    expect(uriAgrees(xItem('javascript:alert(1)//x.com/a/status/12'))).toBe(false);
  });

  it("wants X uris on x.com or twitter.com over https, at the record's author's status", () => {
    for (const good of [
      'https://x.com/Alice/status/12',
      'https://x.com/alice/status/12/',
      'https://www.x.com/ALICE/status/12?s=20#top',
      'https://twitter.com/alice/status/12',
    ])
      expect([good, uriAgrees(xItem(good))]).toEqual([good, true]);
    for (const bad of [
      'https://evil.example/Alice/status/12',
      'https://x.com.evil.example/Alice/status/12',
      'https://evil.example/x.com/Alice/status/12',
      'http://x.com/Alice/status/12',
      'https://x.com:8443/Alice/status/12',
      'https://user@x.com/Alice/status/12',
      'https://x.com/Bob/status/12',
      'https://x.com/status/12',
      'https://x.com/Alice/status/12/photo/1',
      'https://x.com/Alice/likes/status/12',
      'https://x.com/Alice/status/123',
    ])
      expect([bad, uriAgrees(xItem(bad))]).toEqual([bad, false]);
  });

  // A snowflake is written without one; `0` before a real id's digits named the post again.
  it('refuses an X status id with a leading zero, even when the record carries the same id', () => {
    for (const id of ['0123', '012', '0', '01795757939487670279'])
      expect([id, uriAgrees(xItem(`https://x.com/Alice/status/${id}`, id))]).toEqual([id, false]);
    expect(
      uriAgrees(xItem('https://x.com/Alice/status/1795757939487670279', '1795757939487670279')),
    ).toBe(true);
  });

  it("wants Reddit uris on reddit.com under the record's subreddit, naming the record's id", () => {
    const post = 'https://www.reddit.com/r/Bitcoin/comments/abc/a_title/';
    const comment = 'https://www.reddit.com/r/Bitcoin/comments/abc/comment/xyz/';
    expect(uriAgrees(redditItem(post))).toBe(true);
    expect(uriAgrees(redditItem('https://old.reddit.com/r/bitcoin/comments/abc/'))).toBe(true);
    expect(uriAgrees(redditItem(comment, 't1_xyz', 'comment'))).toBe(true);
    for (const bad of [
      'https://evilreddit.com/r/Bitcoin/comments/abc/',
      'https://reddit.com.evil.example/r/Bitcoin/comments/abc/',
      'http://www.reddit.com/r/Bitcoin/comments/abc/',
      'https://www.reddit.com/r/Other/comments/abc/',
      'https://www.reddit.com/r/Bitcoin/comments/abd/abc/',
      'https://www.reddit.com/user/abc/',
    ])
      expect([bad, uriAgrees(redditItem(bad))]).toEqual([bad, false]);
    expect(uriAgrees(redditItem(comment, 't1_abc', 'comment'))).toBe(false);
    expect(uriAgrees({ ...redditItem(post), url: 'https://www.reddit.com/' })).toBe(false);
  });

  // Keys of btree indexes, whose entries Postgres caps at 2,704 bytes: one longer failed a batch.
  it('refuses a Reddit uri longer than MAX_URI_LENGTH, and a longer author name', () => {
    const uriOf = (length: number) => {
      const start = 'https://www.reddit.com/r/Bitcoin/comments/abc/';
      return `${start}${'a'.repeat(length - start.length - 1)}/`;
    };
    expect(uriOf(MAX_URI_LENGTH)).toHaveLength(MAX_URI_LENGTH);
    expect(canonicalUri(redditItem(uriOf(MAX_URI_LENGTH)))).toBe(uriOf(MAX_URI_LENGTH));
    expect(canonicalUri(redditItem(uriOf(MAX_URI_LENGTH + 1)))).toBeUndefined();
    expect(canonicalUri(redditItem(uriOf(4_000)))).toBeUndefined();

    // Reddit's slug: 50 characters of the title, percent-encoded (a review: 512 refused these).
    const slug = encodeURIComponent('比特币'.repeat(17).slice(0, 50));
    const comment = `https://www.reddit.com/r/abcdefghijklmnopqrstu/comments/1abcdef/${slug}/zyxwvut/`;
    const longest = {
      ...redditItem(comment, 't1_zyxwvut', 'comment'),
      communityName: 'r/abcdefghijklmnopqrstu',
    };
    expect(comment.length).toBeGreaterThan(512);
    expect(canonicalUri(longest)).toBe(comment);

    const named = (username: string) => ({ ...redditItem(uriOf(100)), username });
    expect(canonicalItem(named('a'.repeat(MAX_AUTHOR_LENGTH)))).toBeDefined();
    expect(canonicalItem(named('a'.repeat(MAX_AUTHOR_LENGTH + 1)))).toBeUndefined();
  });
});

describe('canonical uris and keys', () => {
  it('spells one X post one way: https://x.com/<handle>/status/<id>', () => {
    for (const uri of [
      'https://x.com/a/status/123',
      'https://x.com/A/status/123',
      'https://twitter.com/a/status/123?s=20',
    ])
      expect(canonicalUri(xItem(uri, '123', 'a'))).toBe('https://x.com/a/status/123');
  });

  it("keeps the X record's own spelling of the handle", () => {
    expect(canonicalUri(xItem('https://x.com/alice/status/12'))).toBe(
      'https://x.com/Alice/status/12',
    );
  });

  it('spells one Reddit item one way, its url too', () => {
    const item = canonicalItem(redditItem('https://old.reddit.com/r/Bitcoin/comments/abc/t?x=1'));
    expect(item).toMatchObject({
      uri: 'https://www.reddit.com/r/Bitcoin/comments/abc/t/',
      url: 'https://www.reddit.com/r/Bitcoin/comments/abc/t/',
    });
  });

  it('keys an item by its post, not its uri', () => {
    expect(itemKey(xItem('https://x.com/a/status/1', '1'))).toBe('X 1');
    expect(itemKey(redditItem('https://www.reddit.com/r/b/comments/abc/'))).toBe('REDDIT t3_abc');
    expect(canonicalItem(xItem('https://evil.example/a/status/1') as DataItem)).toBeUndefined();
  });

  it("keys a Reddit item by its fullname whether or not the record's id carries its kind", () => {
    const uri = 'https://www.reddit.com/r/b/comments/abc/';
    expect(itemKey(redditItem(uri, 'abc'))).toBe(itemKey(redditItem(uri, 't3_abc')));
    expect(itemKey(redditItem(uri, 'abc'))).toBe('REDDIT t3_abc');
    const comment = 'https://www.reddit.com/r/b/comments/xyz/abc/';
    expect(itemKey(redditItem(comment, 'abc', 'comment'))).toBe('REDDIT t1_abc');
    expect(itemKey(redditItem(comment, 't1_abc', 'comment'))).toBe('REDDIT t1_abc');
  });
});

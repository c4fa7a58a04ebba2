import { RedditItem, XItem } from './protocol';
import { parseKeyword } from './keywords';
import { compileQuery, InvalidQueryError, MatchQuery } from './query-matcher';
import { onDemandRequestFields } from './sn13/messages';

function xItem(overrides: Partial<XItem> = {}): XItem {
  return {
    text: 'Bitcoin halving is near #Bitcoin',
    datetime: '2024-05-01T12:00:00.000Z',
    uri: 'https://x.com/Alice/status/1',
    source: 'X',
    label: '#bitcoin',
    content_size_bytes: 300,
    tweet: {
      id: '1',
      like_count: 0,
      retweet_count: 0,
      reply_count: 0,
      quote_count: 0,
      view_count: null,
      bookmark_count: null,
      language: 'en',
      hashtags: ['#Bitcoin', '#TAO'],
      is_retweet: false,
      is_reply: false,
      is_quote: false,
      conversation_id: '1',
      in_reply_to_user_id: null,
      in_reply_to_username: null,
      quoted_tweet_id: null,
    },
    user: {
      id: '42',
      username: 'Alice',
      display_name: 'Alice Tao',
      verified: false,
      user_blue_verified: null,
      followers_count: 10,
      following_count: 5,
      user_description: 'Not a trader',
      user_location: null,
      profile_image_url: null,
      cover_picture_url: null,
    },
    media: null,
    // The deprecated alias, made to differ so that a test shows which field is searched.
    content: 'deprecated alias',
    ...overrides,
  };
}

function redditItem(overrides: Partial<RedditItem> = {}): RedditItem {
  return {
    uri: 'https://www.reddit.com/r/Bitcoin/comments/abc/title/',
    datetime: '2024-05-01T12:00:00.000Z',
    source: 'REDDIT',
    label: 'r/bitcoin',
    content_size_bytes: 250,
    id: 't3_abc',
    url: 'https://www.reddit.com/r/Bitcoin/comments/abc/title/',
    username: 'Bob_99',
    communityName: 'r/Bitcoin',
    body: 'The price moved a lot',
    createdAt: '2024-05-01T12:00:00.000Z',
    dataType: 'post',
    title: 'ETF approved',
    parentId: null,
    media: null,
    is_nsfw: false,
    score: 12,
    upvote_ratio: 0.93,
    num_comments: 4,
    content: 'ETF approved\n\nThe price moved a lot',
    ...overrides,
  };
}

function otherSubreddit(overrides: Partial<RedditItem> = {}): RedditItem {
  return redditItem({
    uri: 'https://www.reddit.com/r/ethereum/comments/def/title/',
    label: 'r/ethereum',
    communityName: 'r/ethereum',
    ...overrides,
  });
}

const matches = (query: MatchQuery, item: unknown): boolean => compileQuery(query).matches(item);

describe('compileQuery', () => {
  describe('source', () => {
    it('matches the source case-insensitively on both sides', () => {
      expect(matches({ source: 'x' }, xItem())).toBe(true);
      expect(matches({ source: 'Reddit' }, redditItem())).toBe(true);
      expect(matches({ source: 'X' }, { ...xItem(), source: 'x' })).toBe(true);
    });

    it('rejects items of the other source', () => {
      expect(matches({ source: 'reddit' }, xItem())).toBe(false);
      expect(matches({ source: 'x' }, redditItem())).toBe(false);
    });

    it('refuses an unknown source', () => {
      expect(() => compileQuery({ source: 'facebook' })).toThrow(InvalidQueryError);
    });
  });

  describe('date bounds', () => {
    const item = xItem({ datetime: '2024-05-01T12:00:00.000Z' });

    it('includes both bounds', () => {
      const query = {
        source: 'x',
        start_date: '2024-05-01T12:00:00Z',
        end_date: '2024-05-01T12:00:00Z',
      };
      expect(matches(query, item)).toBe(true);
    });

    it('excludes items before the start or after the end', () => {
      expect(matches({ source: 'x', start_date: '2024-05-01T12:00:01Z' }, item)).toBe(false);
      expect(matches({ source: 'x', end_date: '2024-05-01T11:59:59Z' }, item)).toBe(false);
    });

    it('treats a missing bound as open', () => {
      expect(matches({ source: 'x', start_date: '2024-04-01', end_date: null }, item)).toBe(true);
      expect(matches({ source: 'x', start_date: null, end_date: '2024-06-01' }, item)).toBe(true);
    });

    it('reads dates without a zone as UTC', () => {
      expect(matches({ source: 'x', start_date: '2024-05-01T12:00:00' }, item)).toBe(true);
      expect(matches({ source: 'x', start_date: '2024-05-01T12:00:01' }, item)).toBe(false);
      expect(matches({ source: 'x', end_date: '2024-05-01 11:59:59' }, item)).toBe(false);
    });

    it('honours explicit offsets', () => {
      // 14:00 at +02:00 is 12:00 UTC.
      expect(matches({ source: 'x', end_date: '2024-05-01T14:00:00+02:00' }, item)).toBe(true);
      expect(matches({ source: 'x', end_date: '2024-05-01T13:59:59+02:00' }, item)).toBe(false);
    });

    it('accepts Date objects', () => {
      const start = new Date('2024-05-01T00:00:00Z');
      const end = new Date('2024-05-02T00:00:00Z');
      expect(matches({ source: 'x', start_date: start, end_date: end }, item)).toBe(true);
      expect(matches({ source: 'x', start_date: end }, item)).toBe(false);
    });

    it('refuses dates it does not read, saying which forms it reads', () => {
      expect(() => compileQuery({ source: 'x', start_date: 'yesterday' })).toThrow(
        InvalidQueryError,
      );
      expect(() => compileQuery({ source: 'x', end_date: '2024-02-31' })).toThrow(
        InvalidQueryError,
      );
      expect(() => compileQuery({ source: 'x', end_date: new Date('nope') })).toThrow(
        InvalidQueryError,
      );
      // An ISO 8601 week date is refused as a form not read, not as "not an ISO 8601 date".
      expect(() => compileQuery({ source: 'x', start_date: '2026-W47' })).toThrow(
        /^start_date must be a date \(YYYY-MM-DD\) or a date-time .*: 2026-W47$/,
      );
    });

    it('rejects items whose datetime cannot be read when a bound is set', () => {
      const broken = xItem({ datetime: 'last tuesday' });
      expect(matches({ source: 'x', start_date: '2024-01-01' }, broken)).toBe(false);
      expect(matches({ source: 'x' }, broken)).toBe(true);
    });
  });

  describe('usernames', () => {
    it('matches X authors case-insensitively, with or without @', () => {
      expect(matches({ source: 'x', usernames: ['alice'] }, xItem())).toBe(true);
      expect(matches({ source: 'x', usernames: ['@ALICE'] }, xItem())).toBe(true);
      expect(matches({ source: 'x', usernames: ['carol', '@alice'] }, xItem())).toBe(true);
    });

    it('matches Reddit authors by username', () => {
      expect(matches({ source: 'reddit', usernames: ['@bob_99'] }, redditItem())).toBe(true);
      expect(matches({ source: 'reddit', usernames: ['bob'] }, redditItem())).toBe(false);
    });

    it('rejects other authors and items without an author', () => {
      expect(matches({ source: 'x', usernames: ['alic'] }, xItem())).toBe(false);
      const withoutUser: Partial<XItem> = xItem();
      delete withoutUser.user;
      expect(matches({ source: 'x', usernames: ['alice'] }, withoutUser)).toBe(false);
    });

    it('ignores an empty list', () => {
      expect(matches({ source: 'x', usernames: [] }, xItem())).toBe(true);
    });

    // Miners match the author exactly: what they are asked for must be what is checked.
    it('compares the authors miners are asked for, and accepts their posts', () => {
      const usernames = ['@Alice ', ' bob_99', '@', ' '];
      const sent = onDemandRequestFields({
        source: 'x',
        usernames,
        keywords: [],
        keywordMode: 'all',
        startDate: null,
        endDate: new Date('2024-05-02T00:00:00Z'),
        limit: 10,
      }).usernames;
      expect(compileQuery({ source: 'x', usernames }).usernames).toEqual(
        sent.map((name) => name.toLowerCase()),
      );
      const byAlice = xItem({ user: { ...xItem().user, username: sent[0] } });
      expect(matches({ source: 'x', usernames }, byAlice)).toBe(true);
    });
  });

  describe('keywords', () => {
    it('requires every keyword, case-insensitively', () => {
      expect(matches({ source: 'x', keywords: ['BITCOIN', 'halving'] }, xItem())).toBe(true);
      expect(matches({ source: 'x', keywords: ['bitcoin', 'ethereum'] }, xItem())).toBe(false);
    });

    it('searches only the X text, not the author', () => {
      expect(matches({ source: 'x', keywords: ['alice'] }, xItem())).toBe(false);
    });

    it('searches `text`, not the deprecated `content` alias', () => {
      expect(matches({ source: 'x', keywords: ['halving'] }, xItem())).toBe(true);
      expect(matches({ source: 'x', keywords: ['deprecated'] }, xItem())).toBe(false);
    });

    it('matches #tags in the X text or in the hashtag list', () => {
      expect(matches({ source: 'x', keywords: ['#bitcoin'] }, xItem())).toBe(true);
      // '#tao' is only in the hashtag list (as '#TAO').
      expect(matches({ source: 'x', keywords: ['#tao'] }, xItem())).toBe(true);
      expect(matches({ source: 'x', keywords: ['#eth'] }, xItem())).toBe(false);
      // Without '#', the hashtag list does not count.
      expect(matches({ source: 'x', keywords: ['tao'] }, xItem())).toBe(false);
    });

    // A tag is one word: `#eth` matched posts tagged only `#ethereum` by substring, which the
    // stored read by label (`#eth` buckets) did not return (an audit's finding).
    it('matches a #tag as a whole tag, not the head of a longer one', () => {
      const tagged = (text: string, hashtags: string[]) =>
        xItem({ text, label: hashtags[0] ?? null, tweet: { ...xItem().tweet, hashtags } });
      const eth = (item: XItem) => matches({ source: 'x', keywords: ['#eth'] }, item);
      expect(eth(tagged('Merge day #Ethereum', ['#ethereum']))).toBe(false);
      expect(eth(tagged('gas #eth_l2 #ethé #eth2', []))).toBe(false);
      expect(eth(tagged('Merge day #ethereum, then #ETH.', []))).toBe(true);
      expect(eth(tagged('#eth', []))).toBe(true);
      expect(eth(tagged('#ethereum', ['ETH']))).toBe(true);
      const any = { source: 'x', keywords: ['#eth', '#ethereum'], keyword_mode: 'any' as const };
      expect(matches(any, tagged('gm #ethereum', ['#ethereum']))).toBe(true);
      expect(matches({ ...any, keyword_mode: 'all' }, tagged('gm #ethereum', ['#ethereum']))).toBe(
        false,
      );
    });

    // Miners file a post under its first tag cut to 140 characters, and statistics list that
    // label: queried as listed, the posts were read from their bucket and dropped (a Unicode audit).
    it('matches a label at the cut length with the posts whose tag it was cut from', () => {
      const long = `#${'漢'.repeat(150)}`;
      const label = `#${'漢'.repeat(139)}`;
      const tagged = (text: string, hashtags: string[]) =>
        xItem({ text, label, tweet: { ...xItem().tweet, hashtags } });
      const asked = (item: XItem) => matches({ source: 'x', keywords: [label] }, item);
      expect(asked(tagged('no tag in the text', [long]))).toBe(true);
      expect(asked(tagged(`gm ${long}`, []))).toBe(true);
      // A tag 140 characters long as typed, longer once lower-cased, is asked for cut.
      const dotted = `#İ${'a'.repeat(200)}`;
      const typed = `#İ${'a'.repeat(138)}`;
      expect(matches({ source: 'x', keywords: [typed] }, tagged('no tag', [dotted]))).toBe(true);
      expect(matches({ source: 'x', keywords: [typed] }, tagged(`gm ${dotted}`, []))).toBe(true);
      // Shorter than the cut, a tag is still whole.
      const short = `#${'漢'.repeat(138)}`;
      expect(matches({ source: 'x', keywords: [short] }, tagged(`gm ${long}`, [long]))).toBe(false);
    });

    it('matches a tag signed with the full-width ＃ as X files it, under #', () => {
      const item = xItem({ text: 'gm ＃Bitcoin', tweet: { ...xItem().tweet, hashtags: [] } });
      expect(matches({ source: 'x', keywords: ['#bitcoin'] }, item)).toBe(true);
      expect(matches({ source: 'x', keywords: ['＃BITCOIN'] }, xItem())).toBe(true);
    });

    it('searches the Reddit title and body', () => {
      expect(matches({ source: 'reddit', keywords: ['etf', 'PRICE'] }, redditItem())).toBe(true);
      const comment = redditItem({ title: null, content: 'Nice ETF', body: 'Nice ETF' });
      expect(matches({ source: 'reddit', keywords: ['etf'] }, comment)).toBe(true);
      expect(matches({ source: 'reddit', keywords: ['approved'] }, comment)).toBe(false);
    });

    it('does not match a keyword across two fields', () => {
      expect(matches({ source: 'reddit', keywords: ['approved the'] }, redditItem())).toBe(false);
    });

    it('treats r/name, /r/name and /name as subreddit selectors on Reddit', () => {
      for (const keyword of ['r/bitcoin', '/r/BITCOIN', '/Bitcoin', 'r/bitcoin/']) {
        expect(matches({ source: 'reddit', keywords: [keyword] }, redditItem())).toBe(true);
        expect(matches({ source: 'reddit', keywords: [keyword] }, otherSubreddit())).toBe(false);
      }
    });

    it('does not match a subreddit selector against the text', () => {
      const mention = otherSubreddit({ body: 'see r/bitcoin', content: 'see r/bitcoin' });
      expect(matches({ source: 'reddit', keywords: ['r/bitcoin'] }, mention)).toBe(false);
    });

    it('combines a subreddit selector with text keywords', () => {
      expect(matches({ source: 'reddit', keywords: ['/bitcoin', 'etf'] }, redditItem())).toBe(true);
      expect(matches({ source: 'reddit', keywords: ['/bitcoin', 'tao'] }, redditItem())).toBe(
        false,
      );
    });

    // `café` typed with a combining accent (NFD) is the same word as the composed one (NFC), in
    // the keyword or in the post (a Unicode audit's finding: neither matched the other).
    it('matches a word however its accents are composed, in keywords and posts', () => {
      const composedPost = xItem({
        text: 'Un caf\u00e9 #Caf\u00e9',
        tweet: { ...xItem().tweet, hashtags: [] },
      });
      const decomposedPost = xItem({
        text: 'Un cafe\u0301',
        tweet: { ...xItem().tweet, hashtags: ['#Cafe\u0301'] },
      });
      for (const keyword of ['caf\u00e9', 'cafe\u0301', '#caf\u00e9', '#cafe\u0301']) {
        expect(matches({ source: 'x', keywords: [keyword] }, composedPost)).toBe(true);
        expect(matches({ source: 'x', keywords: [keyword] }, decomposedPost)).toBe(true);
      }
      const thread = redditItem({ title: 'Cafe\u0301 talk' });
      expect(matches({ source: 'reddit', keywords: ['caf\u00e9'] }, thread)).toBe(true);
    });

    // Lower-cased after composing, `J̌` (no composed capital) became `j` + U+030C, and matched no
    // `ǰ` (U+01F0), nor the reverse (a property-based audit).
    it('matches a capital whose lower-case letter only is composed, either way', () => {
      for (const [keyword, text] of [
        ['J\u030c', 'a \u01f0 b'],
        ['\u01f0', 'a J\u030c b'],
        ['#J\u030c', 'a #\u01f0 b'],
        ['\u03aa\u0301', 'a \u0390 b'],
      ]) {
        const post = xItem({ text, tweet: { ...xItem().tweet, hashtags: [] } });
        expect(matches({ source: 'x', keywords: [keyword] }, post)).toBe(true);
      }
    });

    it('ignores blank keywords', () => {
      expect(matches({ source: 'x', keywords: ['  '] }, xItem())).toBe(true);
    });
  });

  describe('keyword_mode', () => {
    it('is `all` by default: every keyword must hold', () => {
      const keywords = ['halving', 'ethereum'];
      expect(matches({ source: 'x', keywords }, xItem())).toBe(false);
      expect(matches({ source: 'x', keywords, keyword_mode: 'all' }, xItem())).toBe(false);
      expect(matches({ source: 'x', keywords, keyword_mode: null }, xItem())).toBe(false);
    });

    it('with `any`, one keyword of any kind is enough', () => {
      const any = (keywords: string[], item: unknown, source = 'x') =>
        matches({ source, keywords, keyword_mode: 'any' }, item);
      expect(any(['ethereum', 'halving'], xItem())).toBe(true);
      expect(any(['ethereum', '#tao'], xItem())).toBe(true);
      expect(any(['ethereum', '#eth'], xItem())).toBe(false);
      expect(any(['r/ethereum', 'etf'], redditItem(), 'reddit')).toBe(true);
      expect(any(['r/bitcoin', 'nothing here'], redditItem(), 'reddit')).toBe(true);
      expect(any(['r/ethereum', 'nothing here'], redditItem(), 'reddit')).toBe(false);
    });

    it('keeps usernames and dates as conditions of their own (AND) in both modes', () => {
      const query: MatchQuery = {
        source: 'x',
        usernames: ['bob'],
        keywords: ['halving', 'ethereum'],
        keyword_mode: 'any',
      };
      expect(matches(query, xItem())).toBe(false);
      expect(matches({ ...query, usernames: ['alice'] }, xItem())).toBe(true);
      expect(matches({ ...query, usernames: ['alice'], end_date: '2024-04-30' }, xItem())).toBe(
        false,
      );
    });

    it('refuses an unknown mode', () => {
      const query = { source: 'x', keyword_mode: 'most' } as unknown as MatchQuery;
      expect(() => compileQuery(query)).toThrow(InvalidQueryError);
    });
  });

  it('combines every rule', () => {
    const query: MatchQuery = {
      source: 'X',
      usernames: ['@alice'],
      keywords: ['halving', '#tao'],
      start_date: '2024-05-01',
      end_date: '2024-05-02',
    };
    expect(matches(query, xItem())).toBe(true);
    expect(matches(query, xItem({ datetime: '2024-05-03T00:00:00Z' }))).toBe(false);
  });

  it('never throws on malformed items', () => {
    const query: MatchQuery = {
      source: 'x',
      usernames: ['a'],
      keywords: ['#b', 'c'],
      start_date: '2024-01-01',
    };
    for (const item of [
      null,
      undefined,
      42,
      'x',
      [],
      {},
      { source: 7 },
      { source: 'X', user: [], tweet: 'no' },
    ]) {
      expect(matches(query, item)).toBe(false);
    }
  });
});

describe('parseKeyword', () => {
  it('recognises subreddit selectors on Reddit only', () => {
    expect(parseKeyword('/r/Bitcoin', 'reddit')).toEqual({ kind: 'subreddit', label: 'r/bitcoin' });
    expect(parseKeyword('/LocalLLaMA', 'reddit')).toEqual({
      kind: 'subreddit',
      label: 'r/localllama',
    });
    expect(parseKeyword('/bitcoin', 'x')).toEqual({ kind: 'text', text: '/bitcoin' });
    expect(parseKeyword('r/two words', 'reddit')).toEqual({ kind: 'text', text: 'r/two words' });
  });

  it('recognises hashtags on X only', () => {
    expect(parseKeyword(' #TAO ', 'x')).toEqual({ kind: 'hashtag', tag: '#tao' });
    expect(parseKeyword('#tao', 'reddit')).toEqual({ kind: 'text', text: '#tao' });
    expect(parseKeyword('#', 'x')).toEqual({ kind: 'text', text: '#' });
  });
});

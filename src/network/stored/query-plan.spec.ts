import { labelOfKeyword, NetworkQuery, timeBucketId } from '../protocol';
import { FILTERED_OVERSAMPLING, planStoredQuery } from './query-plan';

const NOW = new Date('2026-01-15T12:34:56Z');
const HOUR = 3_600_000;

function query(overrides: Partial<NetworkQuery>): NetworkQuery {
  return {
    source: 'x',
    usernames: [],
    keywords: [],
    keywordMode: 'all',
    startDate: null,
    endDate: NOW,
    limit: 100,
    ...overrides,
  };
}

describe(planStoredQuery.name, () => {
  it('turns X hashtags and cashtags into labels, as miners file them', () => {
    const plan = planStoredQuery(query({ keywords: ['#Bitcoin', '$AAPL', '#bitcoin'] }), NOW);
    expect(plan.labels).toEqual(['#bitcoin', '#aapl']);
    expect(plan.readLabels).toEqual(['#bitcoin', '#aapl']);
    expect(plan.coverage).toBe('complete');
    expect(plan.sourceId).toBe(2);
  });

  it('turns every Reddit subreddit spelling into r/name', () => {
    for (const keyword of ['r/Bitcoin', '/r/bitcoin', '/Bitcoin', 'R/bitcoin/'])
      expect(labelOfKeyword(keyword, 'reddit')).toBe('r/bitcoin');
    expect(labelOfKeyword('bitcoin', 'reddit')).toBeUndefined();
    expect(labelOfKeyword('#bitcoin', 'reddit')).toBeUndefined();
    expect(labelOfKeyword('r/bitcoin', 'x')).toBeUndefined();
    expect(planStoredQuery(query({ source: 'reddit', keywords: ['/r/Tao'] }), NOW).sourceId).toBe(
      1,
    );
  });

  it('cuts a label to 140 characters, as miners do', () => {
    expect(labelOfKeyword(`#${'a'.repeat(200)}`, 'x')).toHaveLength(140);
    // 140 code points (Python's slicing), not 140 UTF-16 units ending in half a pair.
    const astral = '\u{1D41B}';
    expect(labelOfKeyword(`#${astral.repeat(150)}`, 'x')).toBe(`#${astral.repeat(139)}`);
    expect(labelOfKeyword(`$${astral.repeat(150)}`, 'x')).toBe(`#${astral.repeat(139)}`);
  });

  it('maps dates to hour buckets, floor(unix seconds / 3600)', () => {
    const start = new Date('2026-01-14T10:59:59Z');
    const end = new Date('2026-01-15T03:00:00Z');
    const plan = planStoredQuery(
      query({ keywords: ['#tao'], startDate: start, endDate: end }),
      NOW,
    );
    expect(plan.fromBucket).toBe(Math.floor(start.getTime() / 1000 / 3600));
    expect(plan.toBucket).toBe(Math.floor(end.getTime() / 1000 / 3600));
    expect(plan.from).toEqual(start);
    expect(plan.to).toEqual(end);
  });

  it('without start_date reaches back 30 days, and never past now', () => {
    const plan = planStoredQuery(
      query({ keywords: ['#tao'], endDate: new Date(NOW.getTime() + 5 * HOUR) }),
      NOW,
    );
    expect(plan.toBucket).toBe(timeBucketId(NOW));
    expect(plan.fromBucket).toBe(timeBucketId(new Date(NOW.getTime() - 30 * 24 * HOUR)));
  });

  it('plans an empty range for dates outside the horizon', () => {
    const plan = planStoredQuery(
      query({ keywords: ['#tao'], endDate: new Date(NOW.getTime() - 40 * 24 * HOUR) }),
      NOW,
    );
    expect(plan.fromBucket).toBeGreaterThan(plan.toBucket);
  });

  // A range wholly after now, within now's hour: its start and now share a bucket, so only the
  // bucket before it ends the range (a mutation audit's finding).
  it('plans an empty range for dates after now, even within the same hour', () => {
    const plan = planStoredQuery(
      query({
        keywords: ['#tao'],
        startDate: new Date(NOW.getTime() + 10 * 60_000),
        endDate: new Date(NOW.getTime() + 20 * 60_000),
      }),
      NOW,
    );
    expect(plan.fromBucket).toBe(timeBucketId(NOW));
    expect(plan.fromBucket).toBeGreaterThan(plan.toBucket);
  });

  // Hours older than the horizon are neither fetched nor read: a range reaching there said
  // `complete`, and with nothing in its younger part "no data" (an audit's finding).
  it('says partial when the range reaches before the 30-day horizon, complete when it does not', () => {
    const day = 24 * HOUR;
    const coverage = (startDate: Date | null, endDate = NOW) =>
      planStoredQuery(query({ keywords: ['#tao'], startDate, endDate }), NOW).coverage;
    expect(coverage(new Date(NOW.getTime() - 35 * day), new Date(NOW.getTime() - 31 * day))).toBe(
      'partial',
    );
    expect(coverage(new Date(NOW.getTime() - 31 * day))).toBe('partial');
    expect(coverage(null, new Date(NOW.getTime() - 40 * day))).toBe('partial');
    // The horizon's own hour is planned: a start within it reaches no further.
    expect(coverage(new Date(NOW.getTime() - 30 * day - 60_000))).toBe('complete');
    // …unless it ends before the horizon too: nothing of it is planned (a time audit's finding).
    expect(
      coverage(new Date(NOW.getTime() - 30 * day - 60_000), new Date(NOW.getTime() - 30 * day - 1)),
    ).toBe('partial');
    expect(coverage(new Date(NOW.getTime() - 29 * day))).toBe('complete');
    expect(coverage(null)).toBe('complete');
  });

  it('without a label-shaped keyword fetches nothing, reads every label and says partial', () => {
    for (const keywords of [[], ['bitcoin'], ['#']]) {
      const plan = planStoredQuery(query({ keywords, usernames: ['@Alice'] }), NOW);
      expect(plan.labels).toEqual([]);
      expect(plan.readLabels).toBeUndefined();
      expect(plan.coverage).toBe('partial');
      expect(plan.usernames).toEqual(['alice']);
    }
  });

  // Planned as labels, `#bitcoin halving` was complete: no miner holds such a label, so a loaded
  // index answered an empty success though posts under `#bitcoin` say "#bitcoin halving".
  it('reads a #tag or $tag of more than one word, or with punctuation, as text, not a label', () => {
    for (const keyword of ['#bitcoin halving', '$AAPL earnings', '#bitcoin,', '$AAPL.', '#c++']) {
      const plan = planStoredQuery(query({ keywords: [keyword] }), NOW);
      expect([keyword, plan.labels, plan.readLabels, plan.coverage]).toEqual([
        keyword,
        [],
        undefined,
        'partial',
      ]);
    }
    const halving = planStoredQuery(query({ keywords: ['#bitcoin halving'] }), NOW);
    const post = {
      source: 'X',
      uri: 'https://x.com/alice/status/1',
      datetime: '2026-01-15T12:00:00Z',
      text: 'the #Bitcoin halving is near',
      user: { username: 'Alice' },
      tweet: { hashtags: ['#Bitcoin'] },
    };
    expect(halving.matches(post)).toBe(true);
  });

  it('keeps one-word tags in any script as labels', () => {
    const plan = planStoredQuery(
      query({ keywords: ['#Bitcoin_2024', '#भारत', '#日本', '$BTC'], keywordMode: 'any' }),
      NOW,
    );
    expect(plan.labels).toEqual(['#bitcoin_2024', '#भारत', '#日本', '#btc']);
    expect(plan.coverage).toBe('complete');
  });

  it('in `any` mode, a keyword that is not a label makes the coverage partial', () => {
    const any = planStoredQuery(query({ keywords: ['#tao', 'subnet'], keywordMode: 'any' }), NOW);
    expect(any.coverage).toBe('partial');
    expect(any.labels).toEqual([]);
    const labelsOnly = planStoredQuery(
      query({ keywords: ['#tao', '#bittensor'], keywordMode: 'any' }),
      NOW,
    );
    expect(labelsOnly.coverage).toBe('complete');
    expect(labelsOnly.target).toBe(100);
  });

  it('plans for more items when filters thin out the labels', () => {
    expect(planStoredQuery(query({ keywords: ['#tao'] }), NOW).target).toBe(100);
    for (const filtered of [
      { keywords: ['#tao'], usernames: ['alice'] },
      { keywords: ['#tao', 'subnet'] },
      { keywords: ['#tao', '#bittensor'] },
    ])
      expect(planStoredQuery(query(filtered), NOW).target).toBe(100 * FILTERED_OVERSAMPLING);
  });

  it('matches items by the query rules, every keyword or any of them', () => {
    const item = (text: string, hashtags: string[]) => ({
      source: 'X',
      uri: 'https://x.com/alice/status/1',
      datetime: '2026-01-15T12:00:00Z',
      text,
      user: { username: 'Alice' },
      tweet: { hashtags },
    });
    const all = planStoredQuery(query({ keywords: ['#tao', 'subnet'] }), NOW);
    const any = planStoredQuery(query({ keywords: ['#tao', 'subnet'], keywordMode: 'any' }), NOW);
    expect(all.matches(item('new subnet', ['#tao']))).toBe(true);
    expect(all.matches(item('nothing', ['#tao']))).toBe(false);
    expect(any.matches(item('nothing', ['#tao']))).toBe(true);
    expect(any.matches(item('a subnet', []))).toBe(true);
    expect(any.matches(item('nothing', []))).toBe(false);
    const byAuthor = planStoredQuery(query({ usernames: ['bob'] }), NOW);
    expect(byAuthor.matches(item('x', []))).toBe(false);
  });
});

import { characterCount } from '../common/characters';
import {
  bucketEnd,
  bucketStart,
  cutLabel,
  labelOfKeyword,
  namesAuthor,
  statisticsLabel,
  timeBucketId,
} from './protocol';

/** A character outside the Basic Multilingual Plane: one code point, two UTF-16 units. */
const ASTRAL = '\u{1D41B}';

describe('label lengths', () => {
  it('counts code points, as the subnet (Python) and Postgres do', () => {
    expect(characterCount(`#${ASTRAL.repeat(80)}`)).toBe(81);
    expect(characterCount('#tao')).toBe(4);
  });

  it('cuts to 140 code points, never inside a surrogate pair', () => {
    const cut = cutLabel(`#${ASTRAL.repeat(150)}`);
    expect(cut).toBe(`#${ASTRAL.repeat(139)}`);
    expect(cut).not.toMatch(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])/);
    expect(cutLabel(`#${'a'.repeat(200)}`)).toBe(`#${'a'.repeat(139)}`);
    expect(cutLabel('#tao')).toBe('#tao');
  });
});

describe('time buckets', () => {
  it('counts whole hours since the epoch', () => {
    const date = new Date('2024-05-01T12:34:56Z');
    const id = timeBucketId(date);
    expect(id).toBe(Math.floor(date.getTime() / 3_600_000));
    expect(bucketStart(id).toISOString()).toBe('2024-05-01T12:00:00.000Z');
    expect(bucketEnd(id).toISOString()).toBe('2024-05-01T13:00:00.000Z');
    expect(timeBucketId(bucketEnd(id))).toBe(id + 1);
  });
});

describe('namesAuthor', () => {
  it('reads a name as authorName does: trimmed, one leading @ dropped', () => {
    for (const name of ['alice', ' @Alice ', '\t@a_1\n']) expect(namesAuthor(name, 'x')).toBe(true);
    for (const name of ['@@alice', '@ alice', 'al ice', '@', ' ']) {
      expect(namesAuthor(name, 'x')).toBe(false);
      expect(namesAuthor(name, 'reddit')).toBe(false);
    }
  });

  it('takes `-` in a Reddit username only, and 50 characters at most', () => {
    expect(namesAuthor('some-one', 'reddit')).toBe(true);
    expect(namesAuthor('some-one', 'x')).toBe(false);
    expect(namesAuthor('a'.repeat(50), 'x')).toBe(true);
    expect(namesAuthor('a'.repeat(51), 'reddit')).toBe(false);
  });
});

describe('statisticsLabel', () => {
  it('reads a label as an on-demand keyword, under the source or either', () => {
    for (const spelling of ['r/Bitcoin', '/r/bitcoin', '/bitcoin', ' r/bitcoin/ '])
      expect(statisticsLabel(spelling)).toBe('r/bitcoin');
    expect(statisticsLabel('/bitcoin', 'reddit')).toBe('r/bitcoin');
    expect(statisticsLabel('$AAPL')).toBe('#aapl');
    expect(statisticsLabel('$AAPL', 'x')).toBe('#aapl');
    expect(statisticsLabel(' #BitCoin ')).toBe('#bitcoin');
    // Composed (NFC), as posts are written: a combining accent spells the same label.
    expect(statisticsLabel('#Cafe\u0301')).toBe('#caf\u00e9');
    expect(statisticsLabel('Cafe\u0301 au lait')).toBe('caf\u00e9 au lait');
  });

  it("reads X's tags as X makes them: in-word punctuation, the full-width sign", () => {
    expect(labelOfKeyword('#ポケモン・GO', 'x')).toBe('#ポケモン・go');
    expect(labelOfKeyword('＃Bitcoin', 'x')).toBe('#bitcoin');
    expect(labelOfKeyword('#2024', 'x')).toBeUndefined();
    expect(statisticsLabel('＃Bitcoin', 'x')).toBe('#bitcoin');
  });

  it('only trims and lower-cases what names no label, or none under the source', () => {
    expect(statisticsLabel(' Bitcoin Halving ')).toBe('bitcoin halving');
    expect(statisticsLabel('#bitcoin halving')).toBe('#bitcoin halving');
    // A subreddit is no X label: queried under x it stays as written.
    expect(statisticsLabel('/r/Bitcoin', 'x')).toBe('/r/bitcoin');
    expect(statisticsLabel('$AAPL', 'reddit')).toBe('$aapl');
  });
});

import { parseKeyword } from './keywords';

describe(parseKeyword.name, () => {
  it('reads r/name, /r/name and /name as a subreddit of a Reddit query, lower-cased', () => {
    for (const keyword of ['r/Bitcoin', '/r/bitcoin/', '/BITCOIN', ' R/bitcoin '])
      expect(parseKeyword(keyword, 'reddit')).toEqual({ kind: 'subreddit', label: 'r/bitcoin' });
  });

  it('keeps a name Reddit could not have as text: only letters, digits and underscores', () => {
    // A hyphen or a dot is no subreddit name: selecting one would find nothing, matching text may.
    expect(parseKeyword('r/bit-coin', 'reddit')).toEqual({ kind: 'text', text: 'r/bit-coin' });
    expect(parseKeyword('/r/bit.coin', 'reddit')).toEqual({ kind: 'text', text: '/r/bit.coin' });
    expect(parseKeyword('r/my_sub2', 'reddit')).toEqual({ kind: 'subreddit', label: 'r/my_sub2' });
  });

  it('reads a #tag as a hashtag on X only, and a bare # as text', () => {
    expect(parseKeyword('#AI', 'x')).toEqual({ kind: 'hashtag', tag: '#ai' });
    expect(parseKeyword('#AI', 'reddit')).toEqual({ kind: 'text', text: '#ai' });
    expect(parseKeyword('#', 'x')).toEqual({ kind: 'text', text: '#' });
    expect(parseKeyword('r/bitcoin', 'x')).toEqual({ kind: 'text', text: 'r/bitcoin' });
  });

  it('reads a # keyword of more than one word, or with punctuation, as text', () => {
    for (const keyword of ['#bitcoin halving', '#Bitcoin,', '#c++'])
      expect(parseKeyword(keyword, 'x')).toEqual({ kind: 'text', text: keyword.toLowerCase() });
  });
});

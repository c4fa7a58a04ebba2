import { holdsXTag, parseKeyword } from './keywords';

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

  // X's own hashtag characters (twitter-text): a Unicode audit found real tags such as
  // `#ポケモン・GO` read as text, so a stored-data query or a task for one collected nothing.
  it("reads a tag with X's in-word punctuation as one hashtag, and the full-width sign as #", () => {
    for (const keyword of ['#ポケモン・GO', '#Col·legi', '#בית־ספר', '#བོད་ཡིག', '#a\u200db'])
      expect(parseKeyword(keyword, 'x')).toEqual({ kind: 'hashtag', tag: keyword.toLowerCase() });
    expect(parseKeyword('＃Bitcoin', 'x')).toEqual({ kind: 'hashtag', tag: '#bitcoin' });
    expect(parseKeyword('＃Bitcoin', 'reddit')).toEqual({ kind: 'text', text: '＃bitcoin' });
  });

  it('reads a # keyword X would not make a tag of as text: digits only, a keycap', () => {
    for (const keyword of ['#2024', '#１２', '#\ufe0f\u20e3', '#²'])
      expect(parseKeyword(keyword, 'x')).toEqual({ kind: 'text', text: keyword });
    expect(parseKeyword('#web3', 'x')).toEqual({ kind: 'hashtag', tag: '#web3' });
  });
});

describe(holdsXTag.name, () => {
  it('finds a whole tag signed # or ＃, not the head of a longer one', () => {
    expect(holdsXTag('gm ＃bitcoin!', '#bitcoin')).toBe(true);
    expect(holdsXTag('#ポケモン・go day', '#ポケモン')).toBe(false);
    expect(holdsXTag('#ポケモン・go day', '#ポケモン・go')).toBe(true);
  });

  it('finds the head of a longer tag when asked to: a label cut from it', () => {
    expect(holdsXTag('#bitcoinhalving', '#bitcoin', true)).toBe(true);
    expect(holdsXTag('#bitcoinhalving', '#bitcoin')).toBe(false);
  });
});

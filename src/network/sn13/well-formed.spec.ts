import { storableItem, wellFormed } from './well-formed';

describe(wellFormed.name, () => {
  it('answers a value whose strings are all well formed as it is, astral characters included', () => {
    const value = { text: 'gm 🚀 Ω', list: ['#a', null, 3], nested: { flag: true } };
    expect(wellFormed(value)).toBe(value);
  });

  it('drops U+0000 and replaces each unpaired surrogate by U+FFFD, at any depth, in a copy', () => {
    const value = {
      text: 'a\u0000b',
      tweet: { hashtags: ['#ok', '#\ud800x', '\udc00'], like_count: 2 },
      user: { username: 'alice' },
      pair: '\ud83d\ude80',
    };
    const cleaned = wellFormed(value);
    expect(cleaned).toEqual({
      text: 'ab',
      tweet: { hashtags: ['#ok', '#\ufffdx', '\ufffd'], like_count: 2 },
      user: { username: 'alice' },
      pair: '🚀',
    });
    // Untouched parts are shared, and the input is left as it was.
    expect(cleaned.user).toBe(value.user);
    expect(value.text).toBe('a\u0000b');
    expect(value.tweet.hashtags[1]).toBe('#\ud800x');
  });
});

describe(storableItem.name, () => {
  const item = { text: 'a\u0000b' };

  it('walks the item when its JSON holds U+0000 or a surrogate, raw or escaped, paired or not', () => {
    for (const json of [
      '{"text":"a\\u0000b"}',
      '{"text":"\\uD83D\\ude80"}',
      '{"text":"\\udc00"}',
      '{"text":"a\u0000b"}',
      '{"text":"\ud800"}',
    ])
      expect({ json, item: storableItem(item, ['https://x.com/a/status/1', json]) }).toEqual({
        json,
        item: { text: 'ab' },
      });
    expect(storableItem(item, ['{}', 'https://x.com/\u0000'])).toEqual({ text: 'ab' });
  });

  it('answers the item as it is when nothing it was read from can hold either', () => {
    expect(storableItem(item, ['{"text":"gm 🚀 \\u00e9 \\n"}', 'https://x.com/a/status/1'])).toBe(
      item,
    );
  });
});

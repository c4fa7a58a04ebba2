import { redditComment } from '../../test/support/items';
import { pythonFromIsoFormat } from '../common/python-json';
import { answeredItem } from './answered-items';
import { XItem } from './protocol';

const X_ITEM = {
  text: 'gm',
  datetime: '2026-11-20T14:03:51.436Z',
  uri: 'https://x.com/alice/status/1',
  source: 'X',
  label: null,
  content_size_bytes: 10,
  tweet: {},
  user: {},
  media: [],
  content: 'gm',
} as unknown as XItem;

describe(answeredItem.name, () => {
  it("writes an X item's datetime as Python's isoformat() of a UTC time, a fraction only when there is one", () => {
    expect(answeredItem(X_ITEM).datetime).toBe('2026-11-20T14:03:51.436000+00:00');
    expect(answeredItem({ ...X_ITEM, datetime: '2026-11-20T14:03:51.000Z' }).datetime).toBe(
      '2026-11-20T14:03:51+00:00',
    );
  });

  it("writes a Reddit item's datetime and createdAt alike", () => {
    const item = answeredItem(redditComment());
    expect(item.datetime).toBe('2026-11-01T09:05:00+00:00');
    expect(item.source === 'REDDIT' && item.createdAt).toBe('2026-11-01T09:05:00+00:00');
  });

  // What a client of the hosted API on Python 3.10 calls on them; `…000Z` it refuses.
  it('answers dates that datetime.fromisoformat of Python 3.10 reads, to the same instant', () => {
    expect(pythonFromIsoFormat(X_ITEM.datetime)).toBeUndefined();
    for (const item of [answeredItem(X_ITEM), answeredItem(redditComment())]) {
      const dates = item.source === 'X' ? [item.datetime] : [item.datetime, item.createdAt];
      for (const date of dates)
        expect(pythonFromIsoFormat(date)?.getTime()).toBe(new Date(date).getTime());
    }
  });

  it('leaves a date already in that form as it is, and keeps the keys in their order', () => {
    const once = answeredItem(X_ITEM);
    expect(answeredItem(once)).toEqual(once);
    expect(Object.keys(once)).toEqual(Object.keys(X_ITEM));
  });

  it('answers an empty list of media as null, and a list as it is', () => {
    expect(answeredItem(X_ITEM).media).toBeNull();
    expect(answeredItem(redditComment({ media: [] })).media).toBeNull();
    expect(answeredItem(redditComment({ media: ['https://i.redd.it/a.png'] })).media).toEqual([
      'https://i.redd.it/a.png',
    ]);
  });
});

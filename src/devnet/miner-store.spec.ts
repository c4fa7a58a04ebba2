import { DataItem, timeBucketId } from '../network/protocol';
import { generateCorpus } from './corpus';
import { sourceIdOf } from './miner-records';
import { MinerStore } from './miner-store';

const now = new Date('2026-11-01T00:00:00Z');

/** The order the store promises, judged item by item: newer first, then by uri. */
function inOrder(left: DataItem, right: DataItem): boolean {
  const [a, b] = [Date.parse(left.datetime), Date.parse(right.datetime)];
  return a > b || (a === b && left.uri < right.uri);
}

describe('MinerStore', () => {
  const corpus = generateCorpus({ seed: 11, now, size: { x: 400, reddit: 300 } });
  // Equal times, newer than the rest, given in reverse: only the uri can order them.
  const first = corpus.items.find((item) => item.source === 'X')!;
  const twins = [2, 1, 0].map((suffix) => ({
    ...first,
    uri: `${first.uri}-${suffix}`,
    datetime: now.toISOString(),
  }));
  const items = [...corpus.items, ...twins];

  it('holds each source newest first, ties by uri, whatever order it was given', () => {
    const forward = new MinerStore(items);
    const backward = new MinerStore([...items].reverse());
    for (const source of ['X', 'REDDIT'] as const) {
      const held = forward.itemsOf(source);
      expect(held).toHaveLength(items.filter((item) => item.source === source).length);
      for (let index = 1; index < held.length; index++)
        expect(inOrder(held[index - 1], held[index])).toBe(true);
      expect(backward.itemsOf(source).map((item) => item.uri)).toEqual(
        held.map((item) => item.uri),
      );
    }
    expect(
      forward
        .itemsOf('X')
        .slice(0, 3)
        .map((item) => item.uri.slice(-2)),
    ).toEqual(['-0', '-1', '-2']);
  });

  it('answers a date range from the sorted times', () => {
    const store = new MinerStore(items);
    const [from, to] = [now.getTime() - 3 * 86_400_000, now.getTime() - 86_400_000];
    const [start, end] = [new Date(from), new Date(to)];
    const expected = store
      .itemsOf('X')
      .filter((item) => Date.parse(item.datetime) >= from && Date.parse(item.datetime) <= to)
      .map((item) => item.uri);
    expect(expected.length).toBeGreaterThan(0);
    const found = store.matching({
      source: 'X',
      url: null,
      usernames: [],
      keywords: [],
      keyword_mode: 'any',
      start_date: start,
      end_date: end,
      limit: 1000,
    });
    expect(found.map((item) => item.uri)).toEqual(expected);
  });

  it('files each item in its hour and label, newest first within a bucket', () => {
    const store = new MinerStore([...items].reverse());
    for (const item of items.slice(0, 50)) {
      const key = {
        source: sourceIdOf(item),
        label: item.label,
        timeBucket: timeBucketId(new Date(item.datetime)),
      };
      const held = store.bucketItems(key);
      expect(held).toContain(item);
      for (let index = 1; index < held.length; index++)
        expect(inOrder(held[index - 1], held[index])).toBe(true);
      expect(store.bucket(key).map((entity) => entity.uri)).toEqual(held.map((each) => each.uri));
    }
  });
});

import { keyPaths, liveItem } from '../../test/support/items';
import { generateCorpus } from '../devnet/corpus';
import { inItemOrder } from './item-order';
import { currentItemShape } from './legacy-items';
import { DataItem } from './protocol';

/**
 * Live items: the corpus's entities as miners serve them, read by the gateway (sn13/records.ts).
 */
const corpus = generateCorpus({ seed: 5, size: { x: 20, reddit: 20 } }).items;
const liveX = liveItem(corpus.find((item) => item.source === 'X')!);
const liveReddit = liveItem(corpus.find((item) => item.source === 'REDDIT')!);

/** `value` with its keys as a jsonb column gives them back: shorter first, then bytewise. */
function inJsonbOrder(value: unknown): unknown {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return value;
  const entries = Object.entries(value).sort(([a], [b]) =>
    a.length !== b.length ? a.length - b.length : a < b ? -1 : 1,
  );
  return Object.fromEntries(entries.map(([key, inner]) => [key, inJsonbOrder(inner)]));
}

describe(inItemOrder.name, () => {
  it.each([
    ['an X', liveX],
    ['a Reddit', liveReddit],
  ])('answers %s item read from jsonb in the order of live items, nested keys too', (_, item) => {
    const stored = inJsonbOrder(item) as DataItem;
    expect(keyPaths(stored)).not.toEqual(keyPaths(item));
    expect(keyPaths(inItemOrder(stored))).toEqual(keyPaths(item));
    expect(inItemOrder(stored)).toEqual(item);
    // The readers of stored items (the item store, task datasets) go through currentItemShape.
    expect(keyPaths(currentItemShape(stored))).toEqual(keyPaths(item));
  });

  it("keeps the hosted API's order: X nested under tweet and user, Reddit flat", () => {
    expect(Object.keys(inItemOrder(inJsonbOrder(liveX) as DataItem))).toEqual([
      'text',
      'datetime',
      'uri',
      'source',
      'label',
      'content_size_bytes',
      'tweet',
      'user',
      'media',
      'content',
    ]);
    expect(Object.keys(inItemOrder(inJsonbOrder(liveReddit) as DataItem)).slice(0, 8)).toEqual([
      'uri',
      'datetime',
      'source',
      'label',
      'content_size_bytes',
      'id',
      'url',
      'username',
    ]);
  });
});

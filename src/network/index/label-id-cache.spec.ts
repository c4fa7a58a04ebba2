import { LabelIdCache, LabelRow } from './label-id-cache';

/** A `labels` table in memory: ids in order of creation, and the lookups it was asked for. */
function fakeTable() {
  const rows = new Map<string, number>();
  const asked: string[][] = [];
  const create = (missing: string[]): Promise<LabelRow[]> => {
    asked.push(missing);
    for (const value of missing) if (!rows.has(value)) rows.set(value, rows.size + 1);
    return Promise.resolve(missing.map((value) => ({ value, id: rows.get(value)! })));
  };
  return { create, asked };
}

describe('LabelIdCache', () => {
  it('asks for the labels it does not hold, once each, and answers the rest from memory', async () => {
    const table = fakeTable();
    const cache = new LabelIdCache(10);
    expect(await cache.resolve(['#a', '#b', '#a'], table.create)).toEqual(
      new Map([
        ['#a', 1],
        ['#b', 2],
      ]),
    );
    expect(await cache.resolve(['#b', '#c'], table.create)).toEqual(
      new Map([
        ['#b', 2],
        ['#c', 3],
      ]),
    );
    expect(table.asked).toEqual([['#a', '#b'], ['#c']]);
    expect(await cache.resolve([], table.create)).toEqual(new Map());
    expect(table.asked).toHaveLength(2);
  });

  it('keeps at most its bound, the least recently used going first, and still answers every label', async () => {
    const table = fakeTable();
    const cache = new LabelIdCache(2);
    const many = ['#a', '#b', '#c', '#d', '#e'];
    const ids = await cache.resolve(many, table.create);
    expect([...ids.keys()]).toEqual(many);
    expect(cache.size).toBe(2);
    // #d and #e are held; #a went and is read again, with the id it always had.
    expect(await cache.resolve(['#e', '#a'], table.create)).toEqual(
      new Map([
        ['#e', 5],
        ['#a', 1],
      ]),
    );
    expect(table.asked.at(-1)).toEqual(['#a']);
    // Used just now, #e stayed; #d, the least recently used, went for #a.
    await cache.resolve(['#e'], table.create);
    expect(table.asked.at(-1)).toEqual(['#a']);
    await cache.resolve(['#d'], table.create);
    expect(table.asked.at(-1)).toEqual(['#d']);
  });
});

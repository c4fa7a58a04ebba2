import fc from 'fast-check';
import { IndexRow } from './compressed-index';
import {
  prepareIndex,
  totalsColumns,
  totalsDifference,
  totalsFromColumns,
  totalsKey,
} from './prepared-index';

const labelIds = new Map([
  ['#b', 1],
  ['#a', 2],
  ['r/c', 3],
]);

const rowsArbitrary = fc
  .uniqueArray(
    fc.record({
      source: fc.constantFrom<1 | 2>(1, 2),
      label: fc.constantFrom('#a', '#b', 'r/c', null),
      timeBucket: fc.integer({ min: 100, max: 120 }),
      bytes: fc.integer({ min: 1, max: 2 ** 45 }),
    }),
    { selector: (row) => `${row.source}|${row.label}|${row.timeBucket}`, maxLength: 60 },
  )
  .chain((rows) => fc.shuffledSubarray(rows, { minLength: rows.length }));

/** The lookup index's order: source, label id (no label last), hour. */
function lookupKey(row: IndexRow): [number, number, number] {
  return [row.source, row.label === null ? Infinity : labelIds.get(row.label)!, row.timeBucket];
}

describe(prepareIndex.name, () => {
  it('orders any rows as the lookup index does, each row once', () => {
    fc.assert(
      fc.property(rowsArbitrary, (rows) => {
        const { order } = prepareIndex(rows, labelIds);
        expect([...order].sort((a, b) => a - b)).toEqual(rows.map((_, i) => i));
        for (let i = 1; i < order.length; i++) {
          const [a, b] = [lookupKey(rows[order[i - 1]]), lookupKey(rows[order[i]])];
          expect(a[0] - b[0] || a[1] - b[1] || a[2] - b[2]).toBeLessThan(0);
        }
      }),
    );
  });

  it('takes runs in ascending and descending hour order and split runs of one label', () => {
    const row = (label: string | null, timeBucket: number): IndexRow => ({
      source: 2,
      label,
      timeBucket,
      bytes: timeBucket,
    });
    const rows = [
      row('#a', 5),
      row('#a', 4),
      row('#a', 3),
      row(null, 1),
      row('#b', 7),
      row('#a', 9),
    ];
    const { order } = prepareIndex(rows, labelIds);
    expect([...order].map((i) => [rows[i].label, rows[i].timeBucket])).toEqual([
      ['#b', 7],
      ['#a', 3],
      ['#a', 4],
      ['#a', 5],
      ['#a', 9],
      [null, 1],
    ]);
  });

  it('sums bytes per label (labelled rows only) and per hour', () => {
    fc.assert(
      fc.property(rowsArbitrary, (rows) => {
        const labels = new Map<number, number>();
        const buckets = new Map<number, number>();
        for (const row of rows) {
          const hour = totalsKey(row.source, row.timeBucket);
          buckets.set(hour, (buckets.get(hour) ?? 0) + row.bytes);
          if (row.label === null) continue;
          const label = totalsKey(row.source, labelIds.get(row.label)!);
          labels.set(label, (labels.get(label) ?? 0) + row.bytes);
        }
        const prepared = prepareIndex(rows, labelIds);
        expect(prepared.labels).toEqual(labels);
        expect(prepared.buckets).toEqual(buckets);
      }),
    );
  });

  it("keeps each hour's largest bucket, the first listed among equals", () => {
    fc.assert(
      fc.property(rowsArbitrary, (rows) => {
        const largest = new Map<number, { labelId: number; bytes: number }>();
        for (const row of rows) {
          const hour = totalsKey(row.source, row.timeBucket);
          if (row.bytes > (largest.get(hour)?.bytes ?? 0))
            largest.set(hour, {
              labelId: row.label === null ? 0 : labelIds.get(row.label)!,
              bytes: row.bytes,
            });
        }
        expect(prepareIndex(rows, labelIds).largest).toEqual(largest);
      }),
    );
    const tied = prepareIndex(
      [
        { source: 2, label: '#a', timeBucket: 7, bytes: 5 },
        { source: 2, label: null, timeBucket: 7, bytes: 5 },
        { source: 2, label: '#b', timeBucket: 7, bytes: 5 },
      ],
      labelIds,
    );
    expect(tied.largest.get(totalsKey(2, 7))).toEqual({ labelId: 2, bytes: 5 });
  });

  it('rejects a label without an id', () => {
    expect(() =>
      prepareIndex([{ source: 1, label: '#nope', timeBucket: 1, bytes: 1 }], labelIds),
    ).toThrow('label without an id');
  });
});

describe(totalsDifference.name, () => {
  it('subtracts the old totals, keeps vanished keys as negatives and drops unchanged ones', () => {
    const fresh = new Map([
      [totalsKey(1, 10), 5],
      [totalsKey(2, 10), 7],
    ]);
    const old = new Map([
      [totalsKey(2, 10), 7],
      [totalsKey(2, 11), 3],
    ]);
    expect(totalsDifference(fresh, old)).toEqual(
      new Map([
        [totalsKey(1, 10), 5],
        [totalsKey(2, 11), -3],
      ]),
    );
  });
});

describe(totalsColumns.name, () => {
  it('round-trips through the columns SQL takes and gives back (bigints as text)', () => {
    const totals = new Map([
      [totalsKey(1, 490_000), 2 ** 40],
      [totalsKey(2, 7), 1],
    ]);
    const columns = totalsColumns(totals);
    expect(columns).toEqual({ sources: [1, 2], ids: [490_000, 7], bytes: [2 ** 40, 1] });
    expect(totalsFromColumns(columns.sources, columns.ids, columns.bytes.map(String))).toEqual(
      totals,
    );
  });
});

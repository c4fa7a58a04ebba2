import { binaryCopyChunks } from './binary-copy';
import { IndexRow } from './compressed-index';

/** Reads Postgres's binary COPY format back (int4, int2, int4 or NULL, int4, int8 per row). */
function decode(data: Buffer): (number | null)[][] {
  expect(data.subarray(0, 11).toString('latin1')).toBe('PGCOPY\n\xff\r\n\0');
  expect(data.readInt32BE(11)).toBe(0);
  expect(data.readInt32BE(15)).toBe(0);
  const rows: (number | null)[][] = [];
  let at = 19;
  for (;;) {
    const fields = data.readInt16BE(at);
    at += 2;
    if (fields === -1) break;
    expect(fields).toBe(5);
    const row: (number | null)[] = [];
    for (let field = 0; field < fields; field++) {
      const length = data.readInt32BE(at);
      at += 4;
      if (length === -1) row.push(null);
      else if (length === 2) row.push(data.readInt16BE(at));
      else if (length === 4) row.push(data.readInt32BE(at));
      else row.push(Number(data.readBigInt64BE(at)));
      at += Math.max(length, 0);
    }
    rows.push(row);
  }
  expect(at).toBe(data.length);
  return rows;
}

describe(binaryCopyChunks.name, () => {
  it('encodes the rows in the given order, NULL labels and sizes over 32 bits included', () => {
    const rows: IndexRow[] = [
      { source: 2, label: '#a', timeBucket: 490_001, bytes: 2 ** 52 + 3 },
      { source: 1, label: null, timeBucket: 490_000, bytes: 1 },
    ];
    const labelIds = new Map([['#a', 42]]);
    const data = Buffer.concat([...binaryCopyChunks(7, rows, Uint32Array.from([1, 0]), labelIds)]);
    expect(decode(data)).toEqual([
      [7, 1, null, 490_000, 1],
      [7, 2, 42, 490_001, 2 ** 52 + 3],
    ]);
  });

  it('splits many rows into several chunks that decode to all of them', () => {
    const rows: IndexRow[] = Array.from({ length: 20_000 }, (_, i) => ({
      source: 2,
      label: i % 3 === 0 ? null : '#a',
      timeBucket: i,
      bytes: i * 1000,
    }));
    const chunks = [
      ...binaryCopyChunks(1, rows, Uint32Array.from(rows.keys()), new Map([['#a', 5]])),
    ];
    expect(chunks.length).toBeGreaterThan(3);
    const decoded = decode(Buffer.concat(chunks));
    expect(decoded).toHaveLength(rows.length);
    expect(decoded[3]).toEqual([1, 2, null, 3, 3000]);
    expect(decoded[19_999]).toEqual([1, 2, 5, 19_999, 19_999_000]);
  });
});

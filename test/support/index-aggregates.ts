import { DataSource } from 'typeorm';

type Rows = Record<string, string | number>[];

/** Every aggregate of the miner index, and the same figures recomputed from it by GROUP BY. */
export async function aggregatesAndGroupBys(database: DataSource) {
  const query = (sql: string) => database.query<Rows>(sql);
  return {
    labels: await query(`SELECT source, label_id, label, bytes::text, adj_bytes AS adj
      FROM label_totals ORDER BY 1, 2`),
    labelsGroupBy:
      await query(`SELECT i.source, i.label_id, l.value AS label, sum(i.content_size_bytes)::text AS bytes,
        sum(i.content_size_bytes * m.credibility) AS adj
      FROM miner_index i JOIN miners m ON m.uid = i.miner_uid JOIN labels l ON l.id = i.label_id
      GROUP BY 1, 2, 3 ORDER BY 1, 2`),
    buckets: await query(`SELECT source, time_bucket, bytes::text, adj_bytes AS adj
      FROM bucket_totals ORDER BY 1, 2`),
    bucketsGroupBy:
      await query(`SELECT i.source, i.time_bucket, sum(i.content_size_bytes)::text AS bytes,
        sum(i.content_size_bytes * m.credibility) AS adj
      FROM miner_index i JOIN miners m ON m.uid = i.miner_uid GROUP BY 1, 2 ORDER BY 1, 2`),
    minerLabels: await query(
      `SELECT miner_uid, source, label_id, bytes::text FROM miner_label_totals ORDER BY 1, 2, 3`,
    ),
    minerLabelsGroupBy:
      await query(`SELECT miner_uid, source, label_id, sum(content_size_bytes)::text AS bytes
      FROM miner_index WHERE label_id IS NOT NULL GROUP BY 1, 2, 3 ORDER BY 1, 2, 3`),
    minerBuckets: await query(
      `SELECT miner_uid, source, time_bucket, bytes::text, largest_bytes::text FROM miner_bucket_totals ORDER BY 1, 2, 3`,
    ),
    minerBucketsGroupBy:
      await query(`SELECT miner_uid, source, time_bucket, sum(content_size_bytes)::text AS bytes,
        max(content_size_bytes)::text AS largest_bytes
      FROM miner_index GROUP BY 1, 2, 3 ORDER BY 1, 2, 3`),
    // The hour's largest bucket kept in the miner's totals is one the index holds.
    largestNotInIndex: await query(`SELECT t.miner_uid, t.source, t.time_bucket
      FROM miner_bucket_totals t WHERE NOT EXISTS (SELECT FROM miner_index i
        WHERE i.miner_uid = t.miner_uid AND i.source = t.source AND i.time_bucket = t.time_bucket
          AND i.label_id IS NOT DISTINCT FROM t.largest_label_id AND i.content_size_bytes = t.largest_bytes)`),
  };
}

/**
 * Keys and bytes exactly; adjusted bytes within 1e-9 relative plus one byte absolute. They are
 * doubles updated incrementally, so their rounding error follows the largest totals that ever
 * passed through the row (in the medium specs up to 3 miners × 40 rows × 2^40 bytes, an ulp of
 * 1/32), not the current value: a total that fell from 1e12 to a few kB keeps a residue near
 * 1e-5. A lost or doubled contribution shows in the exact raw bytes compared above.
 */
function expectSameTotals(ours: Rows, groupBy: Rows) {
  const withoutAdj = (rows: Rows) => rows.map(({ adj: _adj, ...rest }) => rest);
  expect(withoutAdj(ours)).toEqual(withoutAdj(groupBy));
  ours.forEach((row, i) => {
    const expected = Number(groupBy[i].adj);
    expect(Math.abs(Number(row.adj) - expected)).toBeLessThanOrEqual(1e-9 * expected + 1);
  });
}

/** The network and per-miner totals equal what a GROUP BY over the index gives now. */
export async function expectAggregatesExact(database: DataSource) {
  const all = await aggregatesAndGroupBys(database);
  expectSameTotals(all.labels, all.labelsGroupBy);
  expectSameTotals(all.buckets, all.bucketsGroupBy);
  expect(all.minerLabels).toEqual(all.minerLabelsGroupBy);
  expect(all.minerBuckets).toEqual(all.minerBucketsGroupBy);
  expect(all.largestNotInIndex).toEqual([]);
  // The GROUP BYs join `labels`: an id no label holds would be missing from both sides alike.
  const [{ dangling }] = await database.query<{ dangling: number }[]>(
    `SELECT count(*)::int AS dangling FROM (
       SELECT label_id AS id FROM miner_index WHERE label_id IS NOT NULL
       UNION SELECT unnest(label_ids) FROM miner_label_arrays
       UNION SELECT largest_label_id FROM miner_bucket_totals WHERE largest_label_id IS NOT NULL
       UNION SELECT label_id FROM label_totals) AS used
     WHERE NOT EXISTS (SELECT FROM labels l WHERE l.id = used.id)`,
  );
  expect(dangling).toBe(0);
}

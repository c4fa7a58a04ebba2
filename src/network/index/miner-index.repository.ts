import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { PoolClient } from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { DataSource, EntityManager } from 'typeorm';
import { returningRows } from '../../database/returning-rows';
import { lockAggregates } from './aggregates-lock';
import { IndexRow } from './compressed-index';

interface Totals {
  /** `${source}|${labelId}` → bytes */
  labels: Map<string, number>;
  /** `${source}|${timeBucket}` → bytes */
  buckets: Map<string, number>;
}

/**
 * The miners' index and the aggregates over it. Replacing one miner's index is one transaction:
 * its rows are swapped (bulk-loaded with COPY) and its old per-label and per-hour totals are
 * subtracted from the network totals and the new ones added, weighted by its credibility.
 */
/** Namespace of the per-miner advisory locks (the second key is the uid). */
const MINER_LOCK_NAMESPACE = 7_013_001;

@Injectable()
export class MinerIndexRepository {
  /** Labels are never deleted and their ids never change, so they are cached for good. */
  private readonly labelIds = new Map<string, number>();
  private readonly partitions = new Set<number>();

  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /**
   * Replaces one miner's index in one transaction. The rows and the miner's own totals are
   * written under a per-miner lock, so replaces of different miners overlap; only the short
   * update of the network totals takes the global aggregates lock, after which the miner's
   * credibility is read, so a concurrent credibility change cannot be applied twice or missed.
   */
  async replaceMinerIndex(uid: number, rows: readonly IndexRow[]): Promise<void> {
    const labelIds = await this.resolveLabels(rows);
    const partition = await this.ensurePartition(uid);
    await this.dataSource.transaction(async (manager) => {
      await manager.query('SELECT pg_advisory_xact_lock($1, $2)', [MINER_LOCK_NAMESPACE, uid]);
      // Loading into an empty table and indexing afterwards is several times faster than
      // maintaining the index row by row during COPY.
      await manager.query(`DROP INDEX IF EXISTS ${partition}_lookup`);
      await manager.query(`TRUNCATE ${partition}`);
      await this.copyRows(manager, uid, rows, labelIds);
      await manager.query(
        `CREATE INDEX ${partition}_lookup ON ${partition} (source, label_id, time_bucket)`,
      );
      const old = await this.takeTotals(manager, uid);
      const fresh = totalsOf(rows, labelIds);
      await this.storeTotals(manager, uid, fresh);
      await lockAggregates(manager);
      const [miner] = await manager
        .query<{ credibility: number }[]>(
          'UPDATE miners SET index_synced_at = now(), index_buckets = $2 WHERE uid = $1 RETURNING credibility',
          [uid, rows.length],
        )
        .then((result) => returningRows<{ credibility: number }>(result));
      if (!miner) throw new Error(`unknown miner ${uid}`);
      await this.applyDeltas(manager, difference(fresh, old), miner.credibility);
    });
  }

  /** Label ids for every label in `rows`, creating the missing ones. */
  private async resolveLabels(rows: readonly IndexRow[]): Promise<Map<string, number>> {
    const missing = [
      ...new Set(
        rows.flatMap((row) =>
          row.label === null || this.labelIds.has(row.label) ? [] : [row.label],
        ),
      ),
    ];
    if (missing.length > 0) {
      await this.dataSource.query(
        'INSERT INTO labels (value) SELECT unnest($1::varchar[]) ON CONFLICT (value) DO NOTHING',
        [missing],
      );
      const found = await this.dataSource.query<{ id: number; value: string }[]>(
        'SELECT id, value FROM labels WHERE value = ANY($1::varchar[])',
        [missing],
      );
      for (const label of found) this.labelIds.set(label.value, label.id);
    }
    return this.labelIds;
  }

  /**
   * The miner's partition, created on first use in its own statement: creating a partition
   * locks the parent table, which must not last for a whole replace.
   */
  private async ensurePartition(uid: number): Promise<string> {
    if (!Number.isSafeInteger(uid) || uid < 0) throw new Error(`invalid miner uid ${uid}`);
    const name = `miner_index_p${uid}`;
    if (!this.partitions.has(uid)) {
      await this.dataSource
        .query(`CREATE TABLE IF NOT EXISTS ${name} PARTITION OF miner_index FOR VALUES IN (${uid})`)
        .catch((error: { code?: string }) => {
          // Another replica created it between our check and our statement.
          if (error.code !== '42P07') throw error;
        });
      this.partitions.add(uid);
    }
    return name;
  }

  private async takeTotals(manager: EntityManager, uid: number): Promise<Totals> {
    const labels = returningRows<{ source: number; label_id: number; bytes: string }>(
      await manager.query(
        'DELETE FROM miner_label_totals WHERE miner_uid = $1 RETURNING source, label_id, bytes',
        [uid],
      ),
    );
    const buckets = returningRows<{ source: number; time_bucket: number; bytes: string }>(
      await manager.query(
        'DELETE FROM miner_bucket_totals WHERE miner_uid = $1 RETURNING source, time_bucket, bytes',
        [uid],
      ),
    );
    return {
      labels: new Map(labels.map((row) => [`${row.source}|${row.label_id}`, Number(row.bytes)])),
      buckets: new Map(
        buckets.map((row) => [`${row.source}|${row.time_bucket}`, Number(row.bytes)]),
      ),
    };
  }

  private async copyRows(
    manager: EntityManager,
    uid: number,
    rows: readonly IndexRow[],
    labelIds: Map<string, number>,
  ): Promise<void> {
    const client = (await manager.queryRunner!.connect()) as PoolClient;
    const stream = client.query(
      copyFrom(
        'COPY miner_index (miner_uid, source, label_id, time_bucket, content_size_bytes) FROM STDIN',
      ),
    );
    await pipeline(Readable.from(copyLines(uid, rows, labelIds)), stream);
  }

  private async storeTotals(manager: EntityManager, uid: number, totals: Totals): Promise<void> {
    const labels = splitKeys(totals.labels);
    await manager.query(
      `INSERT INTO miner_label_totals (miner_uid, source, label_id, bytes)
       SELECT $1, * FROM unnest($2::smallint[], $3::int[], $4::bigint[])`,
      [uid, labels.sources, labels.ids, labels.bytes],
    );
    const buckets = splitKeys(totals.buckets);
    await manager.query(
      `INSERT INTO miner_bucket_totals (miner_uid, source, time_bucket, bytes)
       SELECT $1, * FROM unnest($2::smallint[], $3::int[], $4::bigint[])`,
      [uid, buckets.sources, buckets.ids, buckets.bytes],
    );
  }

  /** Adds `deltas` (bytes) to the network totals, weighted by `credibility` for the adjusted ones. */
  private async applyDeltas(
    manager: EntityManager,
    deltas: Totals,
    credibility: number,
  ): Promise<void> {
    const labels = splitKeys(deltas.labels);
    await manager.query(
      `INSERT INTO label_totals AS t (source, label_id, label, bytes, adj_bytes)
       SELECT d.source, d.label_id, l.value, d.bytes, d.bytes * $4::float8
       FROM unnest($1::smallint[], $2::int[], $3::bigint[]) AS d(source, label_id, bytes) JOIN labels l ON l.id = d.label_id
       ON CONFLICT (source, label_id) DO UPDATE SET bytes = t.bytes + EXCLUDED.bytes, adj_bytes = t.adj_bytes + EXCLUDED.adj_bytes`,
      [labels.sources, labels.ids, labels.bytes, credibility],
    );
    await manager.query(
      'DELETE FROM label_totals WHERE bytes <= 0 AND (source, label_id) IN (SELECT * FROM unnest($1::smallint[], $2::int[]))',
      [labels.sources, labels.ids],
    );
    const buckets = splitKeys(deltas.buckets);
    await manager.query(
      `INSERT INTO bucket_totals AS t (source, time_bucket, bytes, adj_bytes)
       SELECT source, time_bucket, bytes, bytes * $4::float8 FROM unnest($1::smallint[], $2::int[], $3::bigint[]) AS d(source, time_bucket, bytes)
       ON CONFLICT (source, time_bucket) DO UPDATE SET bytes = t.bytes + EXCLUDED.bytes, adj_bytes = t.adj_bytes + EXCLUDED.adj_bytes`,
      [buckets.sources, buckets.ids, buckets.bytes, credibility],
    );
    await manager.query(
      'DELETE FROM bucket_totals WHERE bytes <= 0 AND (source, time_bucket) IN (SELECT * FROM unnest($1::smallint[], $2::int[]))',
      [buckets.sources, buckets.ids],
    );
  }
}

function* copyLines(
  uid: number,
  rows: readonly IndexRow[],
  labelIds: Map<string, number>,
): Generator<string> {
  // Batches of lines: one string per row would make the stream machinery the bottleneck.
  const batch: string[] = [];
  for (const row of rows) {
    const labelId = row.label === null ? '\\N' : String(labelIds.get(row.label));
    batch.push(`${uid}\t${row.source}\t${labelId}\t${row.timeBucket}\t${row.bytes}\n`);
    if (batch.length === 5000) {
      yield batch.join('');
      batch.length = 0;
    }
  }
  if (batch.length > 0) yield batch.join('');
}

function totalsOf(rows: readonly IndexRow[], labelIds: Map<string, number>): Totals {
  const totals: Totals = { labels: new Map(), buckets: new Map() };
  for (const row of rows) {
    if (row.label !== null)
      add(totals.labels, `${row.source}|${labelIds.get(row.label)}`, row.bytes);
    add(totals.buckets, `${row.source}|${row.timeBucket}`, row.bytes);
  }
  return totals;
}

function difference(fresh: Totals, old: Totals): Totals {
  const subtract = (a: Map<string, number>, b: Map<string, number>) => {
    const result = new Map(a);
    for (const [key, bytes] of b) add(result, key, -bytes);
    for (const [key, bytes] of result) if (bytes === 0) result.delete(key);
    return result;
  };
  return {
    labels: subtract(fresh.labels, old.labels),
    buckets: subtract(fresh.buckets, old.buckets),
  };
}

function add(map: Map<string, number>, key: string, bytes: number): void {
  map.set(key, (map.get(key) ?? 0) + bytes);
}

function splitKeys(map: Map<string, number>): {
  sources: number[];
  ids: number[];
  bytes: number[];
} {
  const sources: number[] = [];
  const ids: number[] = [];
  const bytes: number[] = [];
  for (const [key, value] of map) {
    const [source, id] = key.split('|');
    sources.push(Number(source));
    ids.push(Number(id));
    bytes.push(value);
  }
  return { sources, ids, bytes };
}

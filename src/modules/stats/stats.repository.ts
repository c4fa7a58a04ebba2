import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { SourceId } from '../../network/sn13/sources';

export interface LabelSizeRow {
  label_value: string;
  content_size_bytes: string;
  adj_content_size_bytes: number;
}

export interface AgeSizeRow {
  time_bucket_id: number;
  content_size_bytes: string;
  adj_content_size_bytes: number;
}

/** A miner holding a bucket, with the label and size its index claims for it. */
export interface BucketHolder {
  uid: number;
  hotkey: string;
  axonUrl: string;
  labelId: number | null;
  label: string | null;
  bytes: number;
}

/**
 * Reads the aggregates the network's index sync maintains (label_totals, bucket_totals) and,
 * for query_bucket, the index itself through its lookup indexes. No query here scans the index.
 */
@Injectable()
export class StatsRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** Changes whenever the totals change (see aggregates-lock.ts). */
  async aggregatesVersion(): Promise<string> {
    const [row] = await this.dataSource.query<{ version: string }[]>(
      'SELECT version FROM aggregates_version WHERE id = 1',
    );
    return row?.version ?? '0';
  }

  topLabels(source: SourceId, limit: number): Promise<LabelSizeRow[]> {
    return this.dataSource.query(
      `SELECT label AS label_value, bytes AS content_size_bytes, adj_bytes AS adj_content_size_bytes
       FROM label_totals WHERE source = $1 AND bytes > 0
       ORDER BY adj_bytes DESC, label
       LIMIT $2`,
      [source, limit],
    );
  }

  ages(source: SourceId, limit: number): Promise<AgeSizeRow[]> {
    return this.dataSource.query(
      `SELECT time_bucket AS time_bucket_id, bytes AS content_size_bytes, adj_bytes AS adj_content_size_bytes
       FROM bucket_totals WHERE source = $1 AND bytes > 0
       ORDER BY time_bucket DESC LIMIT $2`,
      [source, limit],
    );
  }

  async bytesByLabel(label: string): Promise<{ bytes: number; adjBytes: number }> {
    const [row] = await this.dataSource.query<{ bytes: string | null; adj: number | null }[]>(
      `SELECT sum(t.bytes) AS bytes, sum(t.adj_bytes) AS adj
       FROM labels l JOIN label_totals t ON t.source IN (1, 2) AND t.label_id = l.id WHERE l.value = $1`,
      [label],
    );
    return { bytes: Number(row?.bytes ?? 0), adjBytes: row?.adj ?? 0 };
  }

  async labelId(label: string): Promise<number | undefined> {
    const [row] = await this.dataSource.query<{ id: number }[]>(
      'SELECT id FROM labels WHERE value = $1',
      [label],
    );
    return row?.id;
  }

  /** The newest hour in [from, to] holding data of the source (and label, when given). */
  async latestBucket(
    source: SourceId,
    labelId: number | undefined,
    from: number,
    to: number,
  ): Promise<number | undefined> {
    const [row] =
      labelId === undefined
        ? await this.dataSource.query<{ bucket: number | null }[]>(
            'SELECT max(time_bucket) AS bucket FROM bucket_totals WHERE source = $1 AND time_bucket BETWEEN $2 AND $3 AND bytes > 0',
            [source, from, to],
          )
        : await this.dataSource.query<{ bucket: number | null }[]>(
            'SELECT max(time_bucket) AS bucket FROM miner_index WHERE source = $1 AND label_id = $2 AND time_bucket BETWEEN $3 AND $4',
            [source, labelId, from, to],
          );
    return row?.bucket ?? undefined;
  }

  /** Active miners holding the bucket, most credible first. */
  async holders(
    source: SourceId,
    labelId: number | undefined,
    bucket: number,
    limit: number,
  ): Promise<BucketHolder[]> {
    if (labelId !== undefined) {
      const rows = await this.dataSource.query<
        { uid: number; hotkey: string; axon_url: string; bytes: string; label: string }[]
      >(
        `SELECT i.miner_uid AS uid, m.hotkey, m.axon_url, i.content_size_bytes AS bytes, l.value AS label
         FROM miner_index i JOIN miners m ON m.uid = i.miner_uid JOIN labels l ON l.id = i.label_id
         WHERE i.source = $1 AND i.label_id = $2 AND i.time_bucket = $3 AND m.state = 'active'
           AND m.axon_url IS NOT NULL
         ORDER BY m.credibility DESC, m.uid LIMIT $4`,
        [source, labelId, bucket, limit],
      );
      return rows.map((row) => ({
        uid: row.uid,
        hotkey: row.hotkey,
        axonUrl: row.axon_url,
        labelId,
        label: row.label,
        bytes: Number(row.bytes),
      }));
    }
    // Without a label: the hour's largest label at each of its most credible holders.
    const rows = await this.dataSource.query<
      {
        uid: number;
        hotkey: string;
        axon_url: string;
        label_id: number | null;
        label: string | null;
        bytes: string;
      }[]
    >(
      `SELECT h.miner_uid AS uid, m.hotkey, m.axon_url, top.label_id, l.value AS label, top.content_size_bytes AS bytes
       FROM miner_bucket_totals h
       JOIN miners m ON m.uid = h.miner_uid
       CROSS JOIN LATERAL (
         SELECT i.label_id, i.content_size_bytes FROM miner_index i
         WHERE i.miner_uid = h.miner_uid AND i.source = h.source AND i.time_bucket = h.time_bucket
         ORDER BY i.content_size_bytes DESC LIMIT 1) top
       LEFT JOIN labels l ON l.id = top.label_id
       WHERE h.source = $1 AND h.time_bucket = $2 AND m.state = 'active' AND m.axon_url IS NOT NULL
       ORDER BY m.credibility DESC, m.uid LIMIT $3`,
      [source, bucket, limit],
    );
    return rows.map((row) => ({
      uid: row.uid,
      hotkey: row.hotkey,
      axonUrl: row.axon_url,
      labelId: row.label_id,
      label: row.label,
      bytes: Number(row.bytes),
    }));
  }
}

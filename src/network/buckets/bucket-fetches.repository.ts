import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { currentItemShape, StoredItemShape } from '../legacy-items';
import { BucketKey, DataItem } from '../protocol';
import { SourceId } from '../sn13/sources';

export interface StoredFetch {
  label: string | null;
  minerUid: number;
  minerHotkey: string;
  fetchedAt: Date;
  claimedBytes: number;
  items: DataItem[];
}

/** The checked items of buckets fetched from miners, newest fetch per bucket and miner. */
@Injectable()
export class BucketFetchesRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  async save(bucket: BucketKey, fetched: StoredFetch): Promise<void> {
    await this.dataSource.query(
      `INSERT INTO bucket_fetches (source, label, time_bucket, miner_hotkey, miner_uid, fetched_at, claimed_bytes, items)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8::jsonb)
       ON CONFLICT ON CONSTRAINT bucket_fetches_key DO UPDATE SET
         miner_uid = EXCLUDED.miner_uid, fetched_at = EXCLUDED.fetched_at,
         claimed_bytes = EXCLUDED.claimed_bytes, items = EXCLUDED.items`,
      [
        bucket.source,
        bucket.label,
        bucket.timeBucket,
        fetched.minerHotkey,
        fetched.minerUid,
        fetched.fetchedAt,
        fetched.claimedBytes,
        JSON.stringify(fetched.items),
      ],
    );
  }

  /** The newest fetch of the hour with one of `labels` (null = unlabeled), from any miner. */
  async newest(
    source: SourceId,
    timeBucket: number,
    labels: readonly (string | null)[],
  ): Promise<StoredFetch | undefined> {
    const named = labels.filter((label): label is string => label !== null);
    const rows = await this.dataSource.query<
      {
        label: string | null;
        miner_uid: number;
        miner_hotkey: string;
        fetched_at: Date;
        claimed_bytes: string;
        items: StoredItemShape[];
      }[]
    >(
      `SELECT label, miner_uid, miner_hotkey, fetched_at, claimed_bytes, items FROM bucket_fetches
       WHERE source = $1 AND time_bucket = $2 AND (label = ANY($3::varchar[]) OR ($4 AND label IS NULL))
       ORDER BY fetched_at DESC LIMIT 1`,
      [source, timeBucket, named, named.length < labels.length],
    );
    const row = rows[0];
    if (!row) return undefined;
    return {
      label: row.label,
      minerUid: row.miner_uid,
      minerHotkey: row.miner_hotkey,
      fetchedAt: row.fetched_at,
      claimedBytes: Number(row.claimed_bytes),
      // Fetches kept by an earlier release hold the earlier item shapes.
      items: row.items.map(currentItemShape),
    };
  }

  /** Data older than the network's retention is worth nothing. */
  async deleteFetchedBefore(date: Date): Promise<void> {
    await this.dataSource.query('DELETE FROM bucket_fetches WHERE fetched_at < $1', [date]);
  }
}

import { X_ITEM } from '../../data-query/dto/data-query.examples';
import type { QueryBucketResponseDto } from './stats-responses.dto';

/** The hour of the on-demand examples' X item (2026-11-20T14:03:51Z). */
const BUCKET = {
  id: 498662,
  start: '2026-11-20T14:00:00.000Z',
  end: '2026-11-20T15:00:00.000Z',
  source: 'X' as const,
  label: '#bitcoin',
  expected_size: 48213,
};

const MINER = { hotkey: '5F4tQyWrhfGVcNhoqeiNsR6KjD4wMZ2kfhLj4oHYuyHbZAc3', uid: 12 };

/**
 * Whole answers of query_bucket: assembled from the fields' own examples, Swagger UI showed a
 * success beside an error's message and a Reddit item in an X bucket (a Swagger UI audit).
 */
export const QUERY_BUCKET_EXAMPLES: Record<
  string,
  { summary: string; value: QueryBucketResponseDto }
> = {
  fetched: {
    summary: 'Fetched from a miner now',
    value: {
      status: 'success',
      cached: false,
      fetched_at: '2026-11-20T16:02:11.000Z',
      miner: MINER,
      bucket: BUCKET,
      data: [X_ITEM],
    },
  },
  fromEarlierFetch: {
    summary: 'From an earlier fetch of the bucket, no miner called now',
    value: {
      status: 'success',
      cached: true,
      fetched_at: '2026-11-20T15:20:45.000Z',
      miner: MINER,
      bucket: BUCKET,
      data: [X_ITEM],
    },
  },
  noData: {
    summary: 'No bucket of the range holds the label',
    value: { status: 'error', message: 'No data for #bitcoin in buckets 498638..498662' },
  },
};

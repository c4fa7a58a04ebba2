import { ApiExtraModels, ApiProperty, ApiSchema, getSchemaPath } from '@nestjs/swagger';
import { SOURCE_NAMES, SourceName } from '../../../network/sources';
import { DataItemDto, dataItemsProperty } from '../../data-query/dto/data-item.dto';
import { RedditItemDto } from '../../data-query/dto/reddit-item.dto';
import { XItemDto } from '../../data-query/dto/x-item.dto';

/**
 * Sums of the miners' index (Postgres bigint), as whole bytes: JSON numbers, exact up to 2^53,
 * which only inflated claims pass (docs/decisions.md, "Miner index and statistics").
 */
const BYTES = { type: 'integer', format: 'int64', minimum: 0 } as const;
/** floor(unix seconds / 3600): a Postgres integer, like the query's bucket bounds. */
const BUCKET_ID = { type: 'integer', format: 'int32', minimum: 0 } as const;

@ApiSchema({ name: 'LabelSize' })
export class LabelSizeDto {
  @ApiProperty({
    description:
      "Label (lower case) as the miners' indexes file it: `#hashtag` for X, `r/subreddit` for Reddit (another spelling a miner used is listed as it is)",
    example: '#bitcoin',
  })
  label_value: string;

  @ApiProperty({
    ...BYTES,
    description:
      "Bytes the miners' indexes claim under this label, all miners together (claims, checked by spot checks, not counted data)",
    example: 123456789,
  })
  content_size_bytes: number;

  @ApiProperty({
    ...BYTES,
    description:
      'Bytes weighted by the credibility (0..1) of the miner claiming them (a miner not checked yet counts at 0.5), rounded to a whole byte',
    example: 98765432,
  })
  adj_content_size_bytes: number;
}

@ApiSchema({ name: 'AgeSize' })
export class AgeSizeDto {
  @ApiProperty({
    ...BUCKET_ID,
    description:
      'Time bucket id = floor(unix seconds / 3600), i.e. whole hours since the epoch (UTC)',
    example: 494300,
  })
  time_bucket_id: number;

  @ApiProperty({
    ...BYTES,
    description:
      "Bytes the miners' indexes claim in this hour of the source, over every label (data filed under no label included)",
    example: 123456789,
  })
  content_size_bytes: number;

  @ApiProperty({
    ...BYTES,
    description:
      'Bytes weighted by the credibility (0..1) of the miner claiming them (a miner not checked yet counts at 0.5), rounded to a whole byte',
    example: 98765432,
  })
  adj_content_size_bytes: number;
}

@ApiSchema({ name: 'LabelBytes' })
export class LabelBytesDto {
  @ApiProperty({ description: 'The normalized label', example: '#bitcoin' })
  label: string;

  @ApiProperty({
    ...BYTES,
    description:
      "Sum of the content size bytes the miners' indexes claim for the label, X and Reddit together (0 for an unknown label)",
    example: 123456789,
  })
  total_bytes: number;

  @ApiProperty({
    type: 'number',
    format: 'double',
    minimum: 0,
    description:
      'Sum of the bytes weighted by the credibility (0..1) of the miner claiming them (a miner not checked yet counts at 0.5), X and Reddit together, rounded to two decimals',
    example: 98765432.5,
  })
  adj_total_bytes: number;
}

@ApiSchema({ name: 'BucketMiner' })
export class BucketMinerDto {
  @ApiProperty({ example: '5F4tQyWrhfGVcNhoqeiNsR6KjD4wMZ2kfhLj4oHYuyHbZAc3' })
  hotkey: string;

  @ApiProperty({
    description: "The miner's uid (a u16 on chain)",
    type: 'integer',
    format: 'int32',
    minimum: 0,
    maximum: 65535,
    example: 12,
  })
  uid: number;
}

@ApiSchema({ name: 'BucketDescription' })
export class BucketDescriptionDto {
  @ApiProperty({
    ...BUCKET_ID,
    description: 'Time bucket id: floor(unix seconds / 3600)',
    example: 494300,
  })
  id: number;

  @ApiProperty({
    description: 'First instant of the hour (inclusive)',
    format: 'date-time',
    example: '2026-05-22T20:00:00.000Z',
  })
  start: string;

  @ApiProperty({
    description: 'End of the hour (exclusive)',
    format: 'date-time',
    example: '2026-05-22T21:00:00.000Z',
  })
  end: string;

  @ApiProperty({ enum: SOURCE_NAMES, example: 'X' })
  source: SourceName;

  // Required: every bucket answered carries it, null for data filed under no label.
  @ApiProperty({
    type: String,
    nullable: true,
    description: "The bucket's label; null for data the miner filed under no label",
    example: '#bitcoin',
  })
  label: string | null;

  @ApiProperty({
    ...BYTES,
    description: 'Bytes the miner claims for this bucket in its index',
    example: 48213,
  })
  expected_size: number;
}

@ApiSchema({
  name: 'QueryBucketSuccess',
  description:
    "The newest bucket of the range, read: a miner's entities now, or an earlier fetch's",
})
@ApiExtraModels(XItemDto, RedditItemDto)
export class QueryBucketSuccessDto {
  @ApiProperty({ enum: ['success'], example: 'success' })
  status: 'success';

  @ApiProperty({
    description:
      'True when answered from an earlier fetch of this bucket (a spot check or an earlier query_bucket), without calling a miner now: miners allow a validator two GetDataEntityBucket calls an hour',
    example: false,
  })
  cached: boolean;

  @ApiProperty({
    description: 'When the miner sent these entities',
    format: 'date-time',
    example: '2026-11-20T16:02:11.000Z',
  })
  fetched_at: string;

  @ApiProperty({ type: BucketMinerDto })
  miner: BucketMinerDto;

  @ApiProperty({ type: BucketDescriptionDto })
  bucket: BucketDescriptionDto;

  @ApiProperty(
    dataItemsProperty(
      "The bucket's items that passed the checks (they belong to the hour, source and label, and their " +
        'records are well formed), in the item shapes of on-demand queries',
    ),
  )
  data: DataItemDto[];
}

@ApiSchema({
  name: 'QueryBucketError',
  description:
    'No bucket could be read: none of the range holds the label, or no holder can be asked',
})
export class QueryBucketErrorDto {
  @ApiProperty({ enum: ['error'], example: 'error' })
  status: 'error';

  @ApiProperty({
    description: 'Why nothing was returned',
    example: 'No data for #bitcoin in buckets 494276..494300',
  })
  message: string;
}

/**
 * query_bucket's answer, told apart by `status`: one class with every field optional typed
 * neither shape (a contract audit: generated clients saw `data?` on an error).
 */
export type QueryBucketResponseDto = QueryBucketSuccessDto | QueryBucketErrorDto;

export const QUERY_BUCKET_RESPONSE_SCHEMA = {
  oneOf: [
    { $ref: getSchemaPath(QueryBucketSuccessDto) },
    { $ref: getSchemaPath(QueryBucketErrorDto) },
  ],
  discriminator: {
    propertyName: 'status',
    mapping: {
      success: getSchemaPath(QueryBucketSuccessDto),
      error: getSchemaPath(QueryBucketErrorDto),
    },
  },
};

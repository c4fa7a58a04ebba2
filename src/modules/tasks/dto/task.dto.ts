import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { Source, SOURCES } from '../../../common/source';
import { TASK_STATES, TaskState } from '../task.types';

/** Counts the tasks table keeps as Postgres integers. */
const COUNT = { type: 'integer', format: 'int32', minimum: 0 } as const;

@ApiSchema({ name: 'TaskParams' })
export class TaskParamsDto {
  @ApiProperty({ enum: SOURCES, example: 'x' })
  platform: Source;

  @ApiProperty({ type: String, nullable: true, example: '#tao' })
  label: string | null;

  @ApiProperty({ type: String, nullable: true, example: null })
  keyword: string | null;

  @ApiProperty({ type: String, format: 'date-time', nullable: true, example: null })
  post_start_datetime: string | null;

  @ApiProperty({ type: String, format: 'date-time', nullable: true, example: null })
  post_end_datetime: string | null;
}

@ApiSchema({
  name: 'TaskNetworkRegistration',
  description:
    'When the task reached the network: the first vote naming it that was pushed to the Gravity ' +
    'repository and committed on chain (see GET /api/v1/desirabilities/publication)',
})
export class TaskNetworkRegistrationDto {
  @ApiProperty({
    type: 'integer',
    format: 'int64',
    minimum: 0,
    description: 'Block the vote’s commitment was included in',
    example: 6852691,
  })
  block: number;

  @ApiProperty({
    format: 'date-time',
    description: 'When the inclusion was seen',
    example: '2026-11-24T12:05:00.000Z',
  })
  registered_at: string;

  @ApiProperty({
    description: 'The Gravity commit the commitment names',
    pattern: '^[0-9a-f]{40}$',
    example: '3f786850e387550fdab836ed7e6dc881de23001b',
  })
  commit_sha: string;
}

@ApiSchema({ name: 'TaskProgress' })
export class TaskProgressDto {
  @ApiProperty({
    ...COUNT,
    description: 'Distinct items collected so far (deduplicated by uri)',
    example: 1250,
  })
  items_collected: number;

  @ApiProperty({ ...COUNT, description: 'Collection rounds run', example: 42 })
  collections: number;

  @ApiProperty({
    type: String,
    format: 'date-time',
    nullable: true,
    example: '2026-11-21T09:00:12.000Z',
  })
  last_collected_at: string | null;

  @ApiProperty({
    type: 'number',
    format: 'double',
    minimum: 0,
    maximum: 1,
    description:
      'Share of the seven-day lifetime elapsed, 0..1, rounded down to three decimals: 1 only once the lifetime has ended',
    example: 0.25,
  })
  lifetime_elapsed: number;

  @ApiProperty({
    description:
      'True while an active task has gone a whole TASK_COLLECT_INTERVAL (plus one lifecycle tick) without a ' +
      'collection: the collection budget (TASK_COLLECT_PER_MINUTE) cannot keep up with the active tasks, and ' +
      'the lighter ones wait',
    example: false,
  })
  collection_behind: boolean;
}

@ApiSchema({ name: 'TaskDatasetParquet' })
export class TaskDatasetParquetDto {
  @ApiProperty({
    description:
      'Parquet: the same rows as the JSON lines file, one row per item, flat typed columns (lists as ' +
      'Parquet lists, datetimes as UTC timestamps)',
    example: 'application/vnd.apache.parquet',
  })
  content_type: string;

  @ApiProperty({
    type: 'integer',
    format: 'int64',
    description: 'Size of the Parquet file in bytes',
    example: 391204,
  })
  bytes: number;

  @ApiProperty({
    description: 'SHA-256 of the Parquet file, hex (also sent as `X-Content-SHA256`)',
    example: '9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08',
  })
  sha256: string;

  @ApiProperty({ example: '/api/v1/tasks/tao-x/dataset?format=parquet' })
  download_url: string;
}

/**
 * The posting times a task's final collection did not reach (TaskDatasetDto.gap). Inline in the
 * document, not a named schema: OpenAPI 3.0 cannot make a $ref nullable (a `nullable` beside
 * `allOf` still refuses null), and this one is null when the dataset is complete.
 */
export class TaskDatasetGapDto {
  /** Oldest posting time not reached; null from the open start of a window. */
  start: string | null;
  /** Newest posting time not reached. */
  end: string;
}

/**
 * The longest `toISOString()`: a year outside 0000–9999 takes a sign and six digits
 * (`+275760-09-13T00:00:00.000Z`, the last date a Date holds).
 */
const ISO_DATE_TIME_MAX_LENGTH = 27;

/** TaskDatasetGapDto as the document says it. */
const DATASET_GAP_SCHEMA = {
  type: 'object',
  properties: {
    start: {
      type: 'string',
      format: 'date-time',
      maxLength: ISO_DATE_TIME_MAX_LENGTH,
      nullable: true,
      description:
        'Oldest posting time not reached, inclusive; null: from the open start of a window with ' +
        'no `post_start` (no collection before the final one recorded where it got to)',
      example: '2026-12-01T11:00:00.000Z',
    },
    end: {
      type: 'string',
      format: 'date-time',
      maxLength: ISO_DATE_TIME_MAX_LENGTH,
      description:
        'Newest posting time not reached, inclusive: the end of the window as of expiry, or ' +
        'where paging back stopped',
      example: '2026-12-01T11:42:17.000Z',
    },
  },
  required: ['start', 'end'],
} as const;

@ApiSchema({ name: 'TaskDataset' })
export class TaskDatasetDto {
  @ApiProperty({
    description: 'gzip-compressed JSON lines, one item per line, oldest first',
    example: 'application/gzip',
  })
  content_type: string;

  @ApiProperty({ ...COUNT, description: 'Items in the file, one a line', example: 1250 })
  rows: number;

  @ApiProperty({
    type: 'integer',
    format: 'int64',
    minimum: 0,
    description: 'Size of the file in bytes',
    example: 482113,
  })
  bytes: number;

  @ApiProperty({
    description: 'SHA-256 of the file, hex',
    example: 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
  })
  sha256: string;

  @ApiProperty({
    type: String,
    format: 'date-time',
    nullable: true,
    description: 'Oldest item',
    example: '2026-11-14T09:00:41.000Z',
  })
  data_start: string | null;

  @ApiProperty({
    type: String,
    format: 'date-time',
    nullable: true,
    description: 'Newest item',
    example: '2026-11-21T08:59:02.000Z',
  })
  data_end: string | null;

  @ApiProperty({ example: '/api/v1/tasks/tao-x/dataset' })
  download_url: string;

  // Required and null when complete: absent, it would read as a gateway that does not say
  // (docs/decisions.md, "Scraping task lifecycle").
  @ApiProperty({
    ...DATASET_GAP_SCHEMA,
    required: [...DATASET_GAP_SCHEMA.required],
    selfRequired: true,
    nullable: true,
    description:
      'Null when the dataset is complete: its collections asked for every posting time up to ' +
      'the window’s end at expiry (what was asked for: a post no miner answered with is in no ' +
      'dataset). Otherwise the posting times its final collection did not reach ' +
      '(its wait, TASK_COLLECT_INTERVAL after expiry, ran out or a page failed): both formats ' +
      'lack the posts made within it, but for any at its start, which the collection before may ' +
      'have found. A completed task is not compiled again: the gap stays',
    example: null,
  })
  gap: TaskDatasetGapDto | null;

  // Absent rather than null, as `dataset` itself is: OpenAPI 3.0 cannot make a $ref nullable.
  @ApiPropertyOptional({
    type: TaskDatasetParquetDto,
    description:
      'The dataset as Parquet. Written when the task completes; absent for a task completed before ' +
      'the gateway wrote Parquet until its first `?format=parquet` download, which writes it',
  })
  parquet?: TaskDatasetParquetDto;
}

@ApiSchema({ name: 'Task' })
export class TaskDto {
  @ApiProperty({ example: 'tao-x' })
  id: string;

  @ApiProperty({
    enum: TASK_STATES,
    description: 'active → compiling → completed | failed',
    example: 'active',
  })
  state: TaskState;

  @ApiProperty({ type: TaskParamsDto })
  params: TaskParamsDto;

  @ApiProperty({
    description: 'Hotkey of the validator that registered it',
    example: '5F4tQyWrhfGVcNhoqeiNsR6KjD4wMZ2kfhLj4oHYuyHbZAc3',
  })
  registered_by: string;

  @ApiProperty({ format: 'date-time', example: '2026-11-24T12:00:00.000Z' })
  registered_at: string;

  @ApiPropertyOptional({
    type: TaskNetworkRegistrationDto,
    description:
      'Present once a vote naming the task was committed on chain; absent while the vote is local ' +
      'only (publication disabled) or not published yet',
  })
  network_registration?: TaskNetworkRegistrationDto;

  @ApiProperty({
    format: 'date-time',
    description: 'End of the seven active days',
    example: '2026-12-01T12:00:00.000Z',
  })
  expires_at: string;

  @ApiProperty({ type: TaskProgressDto })
  progress: TaskProgressDto;

  @ApiProperty({
    type: String,
    format: 'date-time',
    nullable: true,
    description: 'When the dataset was compiled and the task completed; null until then',
    example: null,
  })
  completed_at: string | null;

  @ApiPropertyOptional({ type: TaskDatasetDto, description: 'Present once completed' })
  dataset?: TaskDatasetDto;

  @ApiPropertyOptional({
    description:
      'Why the last compile failed; absent before any failure and once a compile succeeds',
    type: String,
  })
  failure_reason?: string;
}

@ApiSchema({ name: 'TaskList' })
export class TaskListDto {
  @ApiProperty({
    type: [TaskDto],
    maxItems: 500,
    description: 'At most `limit` tasks; how many the filter selects in all is in `X-Total-Count`',
  })
  tasks: TaskDto[];
}

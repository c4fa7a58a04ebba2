import { Controller, Get, Param, Query } from '@nestjs/common';
import {
  ApiExtraModels,
  ApiOkResponse,
  ApiOperation,
  ApiParam,
  ApiTags,
  getSchemaPath,
} from '@nestjs/swagger';
import { RequireKey } from '../../common/access/access.decorators';
import { ApiErrorResponses } from '../../common/errors/error-responses';
import { validationCase } from '../../common/errors/error-cases';
import { SOURCES } from '../../common/source';
import {
  AgeSizeDto,
  LabelBytesDto,
  LabelSizeDto,
  QueryBucketResponseDto,
} from './dto/stats-responses.dto';
import { LabelQueryDto, QueryBucketQueryDto, SourceDto } from './dto/stats-requests.dto';
import { StatsService, TOP_LIMIT } from './stats.service';

const SOURCE_PARAM = {
  name: 'source',
  enum: SOURCES,
  description: '`x` or `reddit`, in any case, surrounding white space ignored',
};

/** The 422 of an unknown source, in the path or the query. */
const unknownSource = (where: 'path' | 'query') =>
  validationCase('unknownSource', 'A source other than x or reddit', {
    loc: [where, 'source'],
    msg: "Input should be 'x' or 'reddit'",
    type: 'enum',
    ctx: { expected: "'x' or 'reddit'" },
  });

@ApiTags('Statistics')
@ApiExtraModels(LabelSizeDto, AgeSizeDto)
@RequireKey()
@Controller('api/v1')
export class StatsController {
  constructor(private readonly stats: StatsService) {}

  @Get('get_top_labels_by_source/:source')
  @ApiOperation({
    operationId: 'getTopLabelsBySource',
    summary: 'Top 1000 labels of a source by credibility-adjusted bytes',
  })
  @ApiParam(SOURCE_PARAM)
  @ApiOkResponse({
    description: 'Labels, largest adjusted size first',
    schema: { type: 'array', maxItems: TOP_LIMIT, items: { $ref: getSchemaPath(LabelSizeDto) } },
  })
  @ApiErrorResponses(unknownSource('path'))
  topLabels(@Param() params: SourceDto): Promise<LabelSizeDto[]> {
    return this.stats.topLabels(params.source);
  }

  @Get('ages')
  @ApiOperation({
    operationId: 'getAges',
    summary: 'Bytes per time bucket of a source, newest 1000 buckets',
  })
  @ApiOkResponse({
    description: 'Time buckets, newest first',
    schema: { type: 'array', maxItems: TOP_LIMIT, items: { $ref: getSchemaPath(AgeSizeDto) } },
  })
  @ApiErrorResponses(
    validationCase('missingSource', 'No `source`', {
      loc: ['query', 'source'],
      msg: 'Field required',
      type: 'missing',
    }),
    unknownSource('query'),
  )
  ages(@Query() query: SourceDto): Promise<AgeSizeDto[]> {
    return this.stats.ages(query.source);
  }

  @Get('get_bytes_by_label')
  @ApiOperation({
    operationId: 'getBytesByLabel',
    summary: 'Total and adjusted bytes of a label (zeros when unknown)',
  })
  @ApiOkResponse({ type: LabelBytesDto, description: 'The bytes held under the label' })
  @ApiErrorResponses(
    validationCase('missingLabel', 'No `label`', {
      loc: ['query', 'label'],
      msg: 'Field required',
      type: 'missing',
    }),
    validationCase('blankLabel', 'An empty `label`, or only white space', {
      loc: ['query', 'label'],
      msg: 'String should have at least 1 character',
      type: 'string_too_short',
      ctx: { min_length: 1 },
    }),
  )
  bytesByLabel(@Query() query: LabelQueryDto): Promise<LabelBytesDto> {
    return this.stats.bytesByLabel(query.label);
  }

  @Get('query_bucket/:source')
  @ApiOperation({
    operationId: 'queryBucket',
    summary: 'Fetch the latest bucket in a range from the most credible miner holding it',
    description:
      'Bucket ids are whole hours since the Unix epoch (UTC): floor(unix seconds / 3600). Defaults: `end_bucket` = ' +
      'the current bucket − 1, `start_bucket` = `end_bucket` − 24 (at least 0). Finds the newest bucket in the range (for the ' +
      'label, if given) and fetches its entities from the most credible miner holding it. A miner is asked only for a ' +
      'bucket it claims at most half of `MINER_MAX_RESPONSE_BYTES` for (8 MiB by default; an honest answer for more would ' +
      'pass the answer cap): when every holder claims more and no earlier fetch holds the bucket, the answer is ' +
      '`{status: "error", message}`.',
  })
  @ApiParam(SOURCE_PARAM)
  @ApiOkResponse({
    type: QueryBucketResponseDto,
    description: '`{status: "success", miner, bucket, data}` or `{status: "error", message}`',
  })
  @ApiErrorResponses(
    unknownSource('path'),
    validationCase('startAfterEnd', '`start_bucket` after `end_bucket`', {
      loc: ['query', 'start_bucket'],
      msg: 'Value error, start_bucket must not be after end_bucket',
      type: 'value_error',
    }),
    validationCase(
      'startAfterLastCompleteHour',
      'Without `end_bucket`: `start_bucket` after the last complete hour (the current hour or later)',
      {
        loc: ['query', 'start_bucket'],
        msg:
          'Value error, start_bucket must not be after end_bucket (by default the last complete ' +
          'hour, 493205)',
        type: 'value_error',
      },
    ),
    validationCase('blankLabel', 'An empty `label`, or only white space', {
      loc: ['query', 'label'],
      msg: 'String should have at least 1 character',
      type: 'string_too_short',
      ctx: { min_length: 1 },
    }),
  )
  queryBucket(
    @Param() params: SourceDto,
    @Query() query: QueryBucketQueryDto,
  ): Promise<QueryBucketResponseDto> {
    return this.stats.queryBucket(params.source, query);
  }
}

import { Controller, Get, Param, Query, Res } from '@nestjs/common';
import {
  ApiExtraModels,
  ApiOkResponse,
  ApiOperation,
  ApiParam,
  ApiTags,
  getSchemaPath,
} from '@nestjs/swagger';
import type { Response } from 'express';
import { RequireKey } from '../../common/access/access.decorators';
import { ApiErrorResponses } from '../../common/errors/error-responses';
import { RequestHeaders } from '../../common/errors/request-headers';
import { validationCase } from '../../common/errors/error-cases';
import { enumError } from '../../common/errors/pydantic-errors';
import { SOURCES } from '../../common/source';
import {
  AgeSizeDto,
  LabelBytesDto,
  LabelSizeDto,
  QUERY_BUCKET_RESPONSE_SCHEMA,
  QueryBucketErrorDto,
  QueryBucketResponseDto,
  QueryBucketSuccessDto,
} from './dto/stats-responses.dto';
import { LabelQueryDto, QueryBucketQueryDto, SourceDto } from './dto/stats-requests.dto';
import {
  ConditionalAnswer,
  IF_NONE_MATCH_TOO_LONG,
  STATS_ANSWER_HEADERS,
  STATS_CACHE_CONTROL,
  StatsConditionsDto,
} from './dto/stats-conditions.dto';
import { Conditional } from './stats-conditions';
import { StatsService, TOP_LIMIT } from './stats.service';
import { QUERY_BUCKET_EXAMPLES } from './dto/query-bucket.examples';

const SOURCE_PARAM = {
  name: 'source',
  enum: SOURCES,
  description: '`x` or `reddit`, in any case, surrounding white space ignored',
};

/** The 422 of an unknown source, in the path or the query. */
const unknownSource = (where: 'path' | 'query') =>
  validationCase('unknownSource', 'A source other than x or reddit', {
    loc: [where, 'source'],
    ...enumError(SOURCES),
  });

/** Sends the answer's tag and caching, and the answer or (the client holds it) a 304. */
function send<T>(response: Response, conditional: Conditional<T>): T | undefined {
  response.setHeader('ETag', conditional.tag);
  response.setHeader('Cache-Control', STATS_CACHE_CONTROL);
  if (conditional.status === 200) return conditional.answer;
  response.status(304);
  return undefined;
}

/** Where every statistic comes from, said on each operation. */
const FROM_THE_INDEXES =
  "From the miners' data indexes, synced every `INDEX_SYNC_INTERVAL` (65 minutes by default)";
const CONDITIONAL =
  'Answers carry an `ETag`: send it back in `If-None-Match` for a 304 while the totals are unchanged.';

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
    description:
      `${FROM_THE_INDEXES}: each label's bytes over every miner holding it ` +
      "(`content_size_bytes`) and the same bytes weighted by each holder's credibility " +
      `(\`adj_content_size_bytes\`), the 1,000 labels largest by the latter. ${CONDITIONAL}`,
  })
  @ApiParam(SOURCE_PARAM)
  @ApiOkResponse({
    description: 'Labels, largest adjusted size first',
    schema: { type: 'array', maxItems: TOP_LIMIT, items: { $ref: getSchemaPath(LabelSizeDto) } },
    headers: STATS_ANSWER_HEADERS,
  })
  @ConditionalAnswer()
  @ApiErrorResponses(unknownSource('path'), IF_NONE_MATCH_TOO_LONG)
  async topLabels(
    @Param() params: SourceDto,
    @RequestHeaders() conditions: StatsConditionsDto,
    @Res({ passthrough: true }) response: Response,
  ): Promise<LabelSizeDto[] | undefined> {
    return send(response, await this.stats.topLabels(params.source, conditions['if-none-match']));
  }

  @Get('ages')
  @ApiOperation({
    operationId: 'getAges',
    summary: 'Bytes per time bucket of a source, newest 1000 buckets',
    description:
      `${FROM_THE_INDEXES}: each hour's bytes (a time bucket: hours since the Unix epoch) over ` +
      `every miner, plain and weighted by each holder's credibility, the newest 1,000 hours. ` +
      CONDITIONAL,
  })
  @ApiOkResponse({
    description: 'Time buckets, newest first',
    schema: { type: 'array', maxItems: TOP_LIMIT, items: { $ref: getSchemaPath(AgeSizeDto) } },
    headers: STATS_ANSWER_HEADERS,
  })
  @ConditionalAnswer()
  @ApiErrorResponses(
    validationCase('missingSource', 'No source', {
      loc: ['query', 'source'],
      msg: 'Field required',
      type: 'missing',
    }),
    unknownSource('query'),
    IF_NONE_MATCH_TOO_LONG,
  )
  async ages(
    @Query() query: SourceDto,
    @RequestHeaders() conditions: StatsConditionsDto,
    @Res({ passthrough: true }) response: Response,
  ): Promise<AgeSizeDto[] | undefined> {
    return send(response, await this.stats.ages(query.source, conditions['if-none-match']));
  }

  @Get('get_bytes_by_label')
  @ApiOperation({
    operationId: 'getBytesByLabel',
    summary: 'Total and adjusted bytes of a label (zeros when unknown)',
    description:
      `${FROM_THE_INDEXES}: the label's bytes over every miner and every hour, plain and ` +
      `weighted by each holder's credibility; a label no index names answers zeros, not 404. ` +
      CONDITIONAL,
  })
  @ApiOkResponse({
    type: LabelBytesDto,
    description: 'The bytes held under the label',
    headers: STATS_ANSWER_HEADERS,
  })
  @ConditionalAnswer()
  @ApiErrorResponses(
    validationCase('missingLabel', 'No label', {
      loc: ['query', 'label'],
      msg: 'Field required',
      type: 'missing',
    }),
    validationCase('blankLabel', 'An empty label, or only white space', {
      loc: ['query', 'label'],
      msg: 'String should have at least 1 character',
      type: 'string_too_short',
      ctx: { min_length: 1 },
    }),
    IF_NONE_MATCH_TOO_LONG,
  )
  async bytesByLabel(
    @Query() query: LabelQueryDto,
    @RequestHeaders() conditions: StatsConditionsDto,
    @Res({ passthrough: true }) response: Response,
  ): Promise<LabelBytesDto | undefined> {
    return send(response, await this.stats.bytesByLabel(query.label, conditions['if-none-match']));
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
  @ApiExtraModels(QueryBucketSuccessDto, QueryBucketErrorDto)
  @ApiOkResponse({
    schema: QUERY_BUCKET_RESPONSE_SCHEMA,
    description:
      '`{status: "success", cached, fetched_at, miner, bucket, data}` or `{status: "error", message}`',
    headers: STATS_ANSWER_HEADERS,
    examples: QUERY_BUCKET_EXAMPLES,
  })
  @ConditionalAnswer()
  @ApiErrorResponses(
    unknownSource('path'),
    validationCase('startAfterEnd', 'start_bucket after end_bucket', {
      loc: ['query', 'start_bucket'],
      msg: 'Value error, start_bucket must not be after end_bucket',
      type: 'value_error',
    }),
    validationCase(
      'startAfterLastCompleteHour',
      'Without end_bucket: start_bucket after the last complete hour (the current hour or later)',
      {
        loc: ['query', 'start_bucket'],
        msg:
          'Value error, start_bucket must not be after end_bucket (by default the last complete ' +
          'hour, 493205)',
        type: 'value_error',
      },
    ),
    validationCase('blankLabel', 'An empty label, or only white space', {
      loc: ['query', 'label'],
      msg: 'String should have at least 1 character',
      type: 'string_too_short',
      ctx: { min_length: 1 },
    }),
    IF_NONE_MATCH_TOO_LONG,
  )
  async queryBucket(
    @Param() params: SourceDto,
    @Query() query: QueryBucketQueryDto,
    @RequestHeaders() conditions: StatsConditionsDto,
    @Res({ passthrough: true }) response: Response,
  ): Promise<QueryBucketResponseDto | undefined> {
    return send(
      response,
      await this.stats.queryBucket(params.source, query, conditions['if-none-match']),
    );
  }
}

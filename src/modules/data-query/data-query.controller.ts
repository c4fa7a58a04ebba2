import { Body, Controller, HttpCode, Post } from '@nestjs/common';
import { ApiBody, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { RequireKey } from '../../common/access/access.decorators';
import { ApiErrorResponses, JSON_BODY_ERRORS } from '../../common/errors/error-responses';
import { validationCase } from '../../common/errors/error-cases';
import { DataQueryService } from './data-query.service';
import { DataQueryRequestDto } from './dto/data-query-request.dto';
import { DataQueryResponseDto } from './dto/data-query-response.dto';
import { QUERY_REQUEST_EXAMPLES, QUERY_RESPONSE_EXAMPLES } from './dto/data-query.examples';

@ApiTags('Data')
@Controller('api/v1')
export class DataQueryController {
  constructor(private readonly dataQuery: DataQueryService) {}

  @Post('on_demand_data_request')
  @HttpCode(200)
  @RequireKey()
  @ApiOperation({
    operationId: 'queryOnDemandData',
    summary: 'Query miners for data on demand',
    description:
      'Answered by the miners in one of two ways, said in `meta.origin`: `live` asks several miners at once ' +
      '(OnDemandRequest, at most 2 per coldkey) and returns as soon as a quorum has answered or at the deadline; ' +
      "`stored` reads the miners' stored data (GetContentsByBuckets), the way left on today's subnet 13, whose " +
      'miners no longer serve OnDemandRequest. `ON_DEMAND_MODE` chooses (`auto` by default: live while a miner ' +
      'might serve it, else stored). Either way every item is checked: wrong-shaped or non-matching items are ' +
      'dropped and cost the miner credibility. Items are merged, one per post (its canonical `uri`); when `limit` ' +
      'cuts a live answer, items held by more miners win. Identical queries within `QUERY_CACHE_TTL_SECONDS` ' +
      '(60 s by default; 0 turns the cache off) are served from a cache (`meta.cache_hit`). When no miner is ' +
      'available or every miner fails, the answer is still HTTP 200 with `status: "error"` and `meta.error`.',
  })
  @ApiBody({ type: DataQueryRequestDto, examples: QUERY_REQUEST_EXAMPLES })
  @ApiOkResponse({
    type: DataQueryResponseDto,
    description:
      'The matching items (X or Reddit, told apart by `source`) and how they were obtained; ' +
      '`status: "error"` when no miner could answer',
    examples: QUERY_RESPONSE_EXAMPLES,
  })
  @ApiErrorResponses(
    ...JSON_BODY_ERRORS,
    validationCase('limitTooLarge', 'limit over 1000', {
      loc: ['body', 'limit'],
      msg: 'Input should be less than or equal to 1000',
      type: 'less_than_equal',
      ctx: { le: 1000 },
    }),
    validationCase('unknownField', 'A field the request does not have', {
      loc: ['body', 'user_names'],
      msg: 'Extra inputs are not permitted',
      type: 'extra_forbidden',
    }),
  )
  query(@Body() request: DataQueryRequestDto): Promise<DataQueryResponseDto> {
    return this.dataQuery.query(request);
  }
}

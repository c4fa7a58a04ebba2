import { Body, Controller, HttpCode, Post } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { RequireKey } from '../../common/auth/access.decorators';
import { ApiErrorResponses } from '../../common/errors/error-responses';
import { DataQueryService } from './data-query.service';
import { DataQueryRequestDto } from './dto/data-query-request.dto';
import { DataQueryResponseDto } from './dto/data-query-response.dto';

@ApiTags('Data')
@Controller('api/v1')
export class DataQueryController {
  constructor(private readonly dataQuery: DataQueryService) {}

  @Post('on_demand_data_request')
  @HttpCode(200)
  @RequireKey()
  @ApiOperation({
    summary: 'Query miners for data on demand',
    description:
      'Asks several miners at once (at most 2 per coldkey), returns as soon as a quorum has answered or at the ' +
      'deadline, and checks every item: wrong-shaped or non-matching items are dropped and cost the miner ' +
      'credibility. Items of all answering miners are merged, deduplicated by `uri`; when `limit` cuts, items held ' +
      'by more miners win. Identical queries within 60 s are served from a cache (`meta.cache_hit`). When no miner ' +
      'is available or every miner fails, the answer is still HTTP 200 with `status: "error"` and `meta.error`.',
  })
  @ApiOkResponse({ type: DataQueryResponseDto })
  @ApiErrorResponses(413, 415, 422)
  query(@Body() request: DataQueryRequestDto): Promise<DataQueryResponseDto> {
    return this.dataQuery.query(request);
  }
}

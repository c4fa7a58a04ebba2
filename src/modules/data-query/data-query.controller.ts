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
  @ApiOperation({ summary: 'Query miners for data on demand' })
  @ApiOkResponse({ type: DataQueryResponseDto })
  @ApiErrorResponses(422, 501)
  query(@Body() request: DataQueryRequestDto): Promise<DataQueryResponseDto> {
    return this.dataQuery.query(request);
  }
}

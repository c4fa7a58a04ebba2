import { Body, Controller, Get, HttpCode, Post, Query } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { RequireKey, RequireValidatorKey } from '../../common/auth/access.decorators';
import { ApiErrorResponses } from '../../common/errors/error-responses';
import { DesirabilityService } from './desirability.service';
import { DesirabilityRequestDto } from './dto/desirability-request.dto';
import { GetDesirabilitiesQueryDto } from './dto/get-desirabilities-query.dto';

@ApiTags('Scraping tasks')
@Controller('api/v1')
export class DesirabilityController {
  constructor(private readonly desirability: DesirabilityService) {}

  @Post('set_desirabilities')
  @HttpCode(200)
  @RequireValidatorKey()
  @ApiOperation({ summary: "Submit this validator's desirabilities (scraping tasks)" })
  @ApiOkResponse({ description: '`{"status": "success", "message": "...", "tasks": [...]}`' })
  @ApiErrorResponses(422, 501)
  submit(@Body() request: DesirabilityRequestDto): Promise<Record<string, unknown>> {
    return this.desirability.submit(request);
  }

  @Get('get_desirabilities')
  @RequireKey()
  @ApiOperation({ summary: "A validator's submission, or the current aggregate desirability list" })
  @ApiOkResponse({ description: 'The submission of `hotkey`, or the aggregate list' })
  @ApiErrorResponses(404, 422, 501)
  get(@Query() query: GetDesirabilitiesQueryDto): Promise<unknown> {
    return this.desirability.get(query);
  }
}

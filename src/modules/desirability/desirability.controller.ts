import { Body, Controller, Get, HttpCode, Post, Query, Res } from '@nestjs/common';
import type { Response } from 'express';
import {
  ApiBody,
  ApiExtraModels,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
  getSchemaPath,
} from '@nestjs/swagger';
import { RequireKey, RequireValidatorKey } from '../../common/auth/access.decorators';
import { ApiErrorResponses } from '../../common/errors/error-responses';
import { DesirabilityRequestPipe } from './desirability-request.pipe';
import { DesirabilityService } from './desirability.service';
import { ParsedSubmission } from './desirability.types';
import { DesirabilityJobDto, LegacyDesirabilityDto } from './dto/desirability-job.dto';
import { DesirabilityRequestDto } from './dto/desirability-request.dto';
import { DesirabilitySubmittedDto } from './dto/desirability-submitted.dto';
import { GetDesirabilitiesQueryDto } from './dto/get-desirabilities-query.dto';

@ApiTags('Scraping tasks')
@ApiExtraModels(DesirabilityJobDto, LegacyDesirabilityDto)
@Controller('api/v1')
export class DesirabilityController {
  constructor(private readonly desirability: DesirabilityService) {}

  @Post('set_desirabilities')
  @HttpCode(200)
  @RequireValidatorKey()
  @ApiOperation({
    summary: "Submit this validator's desirabilities (scraping tasks)",
    description:
      'The body becomes the current vote of this service’s validator hotkey, replacing the previous ' +
      'one; an empty list withdraws it. Each job is registered as a scraping task, active for seven ' +
      'days from its first registration. Every violation is reported at once (422), each at its path; ' +
      'a job id already registered for different params is a 422 at that job, and nothing is stored.',
  })
  @ApiBody({ type: DesirabilityRequestDto })
  @ApiOkResponse({ type: DesirabilitySubmittedDto })
  @ApiErrorResponses(413, 415, 422)
  submit(
    @Body(DesirabilityRequestPipe) submission: ParsedSubmission,
  ): Promise<DesirabilitySubmittedDto> {
    return this.desirability.submit(submission);
  }

  @Get('get_desirabilities')
  @RequireKey()
  @ApiOperation({
    summary: "A validator's submission, or the current aggregate desirability list",
    description:
      'With `hotkey`: that validator’s current submission, exactly as submitted (unscaled). Without: a page ' +
      '(`limit`, `offset`; the total in `X-Total-Count`) of the aggregate, heaviest first: the owner’s default list weighted 0.3 plus every validator’s vote weighted ' +
      '0.7 × its share of the voters’ stake, counting only jobs whose task is active; identical jobs add up.',
  })
  @ApiOkResponse({
    description:
      'The submission of `hotkey` (as submitted), or one page of the aggregate in the requested format',
    headers: {
      'X-Total-Count': {
        description: 'Jobs in the whole aggregate (or in the submission, with `hotkey`)',
        schema: { type: 'integer' },
      },
    },
    // A submission may mix both formats, and is answered as submitted: items of either kind.
    schema: {
      type: 'array',
      items: {
        oneOf: [
          { $ref: getSchemaPath(DesirabilityJobDto) },
          { $ref: getSchemaPath(LegacyDesirabilityDto) },
        ],
      },
    },
  })
  @ApiErrorResponses(404, 422)
  async get(
    @Query() query: GetDesirabilitiesQueryDto,
    @Res({ passthrough: true }) response: Response,
  ): Promise<unknown[]> {
    const { items, total } = await this.desirability.get(query);
    response.setHeader('X-Total-Count', String(total));
    return items;
  }
}

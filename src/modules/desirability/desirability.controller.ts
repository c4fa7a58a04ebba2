import { Body, Controller, Get, HttpCode, Post, Query, Res } from '@nestjs/common';
import type { Response } from 'express';
import { ApiBody, ApiExtraModels, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { RequireKey, RequireValidatorKey } from '../../common/auth/access.decorators';
import {
  ApiErrorResponses,
  errorCase,
  JSON_BODY_ERRORS,
  validationCase,
} from '../../common/errors/error-responses';
import { MAX_DESIRABILITY_JOBS } from '../../config/environment-variables';
import { DesirabilityRequestPipe } from './desirability-request.pipe';
import { DesirabilityService } from './desirability.service';
import { ParsedSubmission } from './desirability.types';
import { DesirabilityJobDto, LegacyDesirabilityDto } from './dto/desirability-job.dto';
import { DESIRABILITY_ITEM_SCHEMA, DesirabilityRequestDto } from './dto/desirability-request.dto';
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
    operationId: 'setDesirabilities',
    summary: "Submit this validator's desirabilities (scraping tasks)",
    description:
      'The body becomes the current vote of this service’s validator hotkey, replacing the previous ' +
      'one; an empty list withdraws it. Each job is registered as a scraping task, active for seven ' +
      'days from its first registration. Every violation is reported at once (422), each at its path; ' +
      'a job id already registered for different params is a 422 at that job, and nothing is stored.',
  })
  @ApiBody({ type: DesirabilityRequestDto })
  @ApiOkResponse({
    type: DesirabilitySubmittedDto,
    description: 'The vote is stored and its tasks registered',
  })
  @ApiErrorResponses(
    ...JSON_BODY_ERRORS,
    validationCase('weightNotPositive', 'A job weighted 0', {
      loc: ['body', 'desirabilities', 0, 'weight'],
      msg: 'Input should be greater than 0',
      type: 'greater_than',
      ctx: { gt: 0 },
    }),
  )
  submit(
    @Body(DesirabilityRequestPipe) submission: ParsedSubmission,
  ): Promise<DesirabilitySubmittedDto> {
    return this.desirability.submit(submission);
  }

  @Get('get_desirabilities')
  @RequireKey()
  @ApiOperation({
    operationId: 'getDesirabilities',
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
        schema: { type: 'integer', format: 'int32', minimum: 0 },
      },
    },
    // A submission may mix both formats, and is answered as submitted: items of either kind.
    schema: { type: 'array', maxItems: MAX_DESIRABILITY_JOBS, items: DESIRABILITY_ITEM_SCHEMA },
  })
  @ApiErrorResponses(
    errorCase(
      404,
      'noSubmission',
      'The hotkey has no current submission',
      'No desirabilities submitted by hotkey 5F4tQyWrhfGVcNhoqeiNsR6KjD4wMZ2kfhLj4oHYuyHbZAc3',
    ),
    validationCase('unknownFormat', 'A `format` other than jobs or legacy', {
      loc: ['query', 'format'],
      msg: "Input should be 'jobs' or 'legacy'",
      type: 'enum',
      ctx: { expected: "'jobs' or 'legacy'" },
    }),
  )
  async get(
    @Query() query: GetDesirabilitiesQueryDto,
    @Res({ passthrough: true }) response: Response,
  ): Promise<unknown[]> {
    const { items, total } = await this.desirability.get(query);
    response.setHeader('X-Total-Count', String(total));
    return items;
  }
}

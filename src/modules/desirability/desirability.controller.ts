import { Body, Controller, Get, HttpCode, Post, Query, Res } from '@nestjs/common';
import type { Response } from 'express';
import { ApiBody, ApiExtraModels, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ClientGone } from '../../common/http/client-gone';
import { RequireKey, RequireValidatorKey } from '../../common/access/access.decorators';
import { ApiErrorResponses, JSON_BODY_ERRORS } from '../../common/errors/error-responses';
import { errorCase, validationCase } from '../../common/errors/error-cases';
import { enumError } from '../../common/errors/pydantic-errors';
import { NOT_READY_RETRY_AFTER_SECONDS } from '../../common/errors/retry-later';
import { MAX_DESIRABILITY_JOBS } from '../../config/environment-variables';
import { DesirabilityRequestPipe } from './desirability-request.pipe';
import { DesirabilityService } from './desirability.service';
import { ParsedSubmission } from './desirability.types';
import { GET_DESIRABILITIES_EXAMPLES } from './dto/get-desirabilities.examples';
import { DesirabilityJobDto, LegacyDesirabilityDto } from './dto/desirability-job.dto';
import {
  DesirabilityRequestDto,
  SUBMITTED_ITEM_SCHEMA,
  SubmittedItem,
} from './dto/desirability-request.dto';
import { DesirabilitySubmittedDto } from './dto/desirability-submitted.dto';
import {
  DESIRABILITY_FORMATS,
  GetDesirabilitiesQueryDto,
} from './dto/get-desirabilities-query.dto';
import { GravityJobDto, GravityLegacyDesirabilityDto } from './dto/gravity-entry.dto';
import { NetworkDesirabilitiesDto } from './dto/network-desirabilities.dto';
import { AGGREGATE_PENDING, noSubmission } from './desirability-errors';

@ApiTags('Scraping tasks')
@ApiExtraModels(
  DesirabilityJobDto,
  LegacyDesirabilityDto,
  GravityJobDto,
  GravityLegacyDesirabilityDto,
)
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
      'a job id already registered for different params is a 422 at that job, and nothing is stored. ' +
      'Safe to repeat: the same body again registers nothing new. A vote whose client leaves before ' +
      'it is stored (a timeout) is not stored, so it cannot replace a vote sent after it.',
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
    @ClientGone() gone: AbortSignal,
  ): Promise<DesirabilitySubmittedDto> {
    return this.desirability.submit(submission, gone);
  }

  @Get('get_desirabilities')
  @RequireKey()
  @ApiOperation({
    operationId: 'getDesirabilities',
    summary: "A validator's submission, or the current aggregate desirability list",
    description:
      'With `hotkey`: that validator’s current submission as submitted: its jobs in their order, with their ids and ' +
      'weights, unscaled (stored as JSON: an object’s keys may come back in another order and a number in its ' +
      'shortest form, `1e1` as `10`; from the network, the ' +
      'file as written, which may hold jobs this gateway does not count, `GravityJob`, and entries the subnet’s reader ' +
      'skips, `GravitySkippedEntry`). Without: a page ' +
      '(`limit`, `offset`; the total in `X-Total-Count`) of the aggregate, heaviest first: the owner’s default list weighted 0.3 plus every validator’s vote weighted ' +
      '0.7 × its share of the voters’ stake; identical jobs (the same five params) add up.\n\n' +
      'With a chain and a Gravity repository configured (SUBTENSOR_URL, GRAVITY_REPO_URL) both read the network: a ' +
      'submission is the validator’s `validator_preferences/<hotkey>.json` at the git SHA it committed on chain ' +
      '(`X-Commitment-Sha`, `X-Commitment-Block`); the aggregate is rebuilt every DESIRABILITY_SYNC_INTERVAL from every ' +
      'validator with a permit and a commitment, its votes read as the subnet’s validators read them and combined by ' +
      'this formula (not the subnet’s: docs/decisions.md, "The formula"), and the last good one is served (`Age`, `X-Aggregate-Computed-At`; ' +
      'who counted and why others did not: `GET /api/v1/desirabilities/network`). Without, the votes stored in this ' +
      'gateway, counting only jobs whose task is active.',
  })
  @ApiOkResponse({
    description:
      'The submission of `hotkey` (as submitted), or one page of the aggregate in the requested format',
    headers: {
      'X-Total-Count': {
        description:
          'Entries of the whole aggregate in the requested format: jobs, or labels with `format=legacy` (the unit ' +
          '`limit` and `offset` count). With `hotkey`: the jobs of the submission, a legacy entry counting one per label',
        schema: { type: 'integer', format: 'int32', minimum: 0 },
      },
      'X-Aggregate-Source': {
        description: 'Without `hotkey`: `network` (read from the chain and Gravity) or `local`',
        schema: { type: 'string', enum: ['network', 'local'] },
      },
      'X-Aggregate-Version': {
        description:
          'Without `hotkey`: names the aggregate this page is of, the same on every page and in either format while ' +
          'no vote, stake or task changes it, and on every replica. Pages read under different versions come ' +
          'from different lists: read again from offset 0',
        schema: {
          type: 'string',
          minLength: 16,
          maxLength: 16,
          pattern: '^[0-9a-f]{16}$',
          example: '3f2a9c0d71be4e58',
        },
      },
      'X-Aggregate-Computed-At': {
        description: 'Without `hotkey`, network aggregate: when it was computed',
        schema: { type: 'string', format: 'date-time', example: '2026-11-20T12:00:00.000Z' },
      },
      Age: {
        description: 'Without `hotkey`, network aggregate: seconds since it was computed',
        schema: { type: 'integer', format: 'int64', minimum: 0 },
      },
      'X-Commitment-Sha': {
        description: 'With `hotkey`, network: the git SHA the validator committed on chain',
        schema: { type: 'string', pattern: '^[0-9a-f]{40}$' },
      },
      'X-Commitment-Block': {
        description: 'With `hotkey`, network: the block of that commitment',
        schema: { type: 'integer', format: 'int64', minimum: 0 },
      },
      'X-Vote-Published': {
        description:
          'With this gateway’s own hotkey, network: whether the committed vote is the latest local vote ' +
          '(`false` while a newer vote is being published)',
        schema: { type: 'string', enum: ['true', 'false'] },
      },
    },
    // A submission may mix both formats, and is answered as submitted: items of either kind; a
    // network file, as written: items in the subnet's uploaders' shapes.
    schema: { type: 'array', maxItems: MAX_DESIRABILITY_JOBS, items: SUBMITTED_ITEM_SCHEMA },
    examples: GET_DESIRABILITIES_EXAMPLES,
  })
  @ApiErrorResponses(
    errorCase(
      404,
      'noSubmission',
      'The hotkey has no current submission (network: no commitment, or one that is no vote; the detail says why)',
      noSubmission('5F4tQyWrhfGVcNhoqeiNsR6KjD4wMZ2kfhLj4oHYuyHbZAc3'),
    ),
    errorCase(
      503,
      'networkUnavailable',
      'Network: the chain or the Gravity repository cannot be read now, or no aggregate was computed yet ' +
        '(Retry-After says when to come back)',
      AGGREGATE_PENDING,
      { retryAfter: NOT_READY_RETRY_AFTER_SECONDS },
    ),
    validationCase('unknownFormat', 'A format other than jobs or legacy', {
      loc: ['query', 'format'],
      ...enumError(DESIRABILITY_FORMATS),
    }),
  )
  async get(
    @Query() query: GetDesirabilitiesQueryDto,
    @Res({ passthrough: true }) response: Response,
  ): Promise<SubmittedItem[]> {
    const { items, total, headers } = await this.desirability.get(query);
    response.setHeader('X-Total-Count', String(total));
    for (const [name, value] of Object.entries(headers)) response.setHeader(name, value);
    return items;
  }

  @Get('desirabilities/network')
  @RequireKey()
  @ApiOperation({
    operationId: 'getNetworkDesirabilities',
    summary: 'How the aggregate desirability list is made',
    description:
      'Where the aggregate of `get_desirabilities` comes from (`network` or `local`); for the network: when it was ' +
      'computed and its age, the validators counted with their stake, share and committed SHA, and every ' +
      'commitment that counts as no vote with the reason (not a SHA, no permit, the commit or file missing from ' +
      'the Gravity repository, a file the subnet’s reader would fail on or its uploaders never write, a withdrawn ' +
      'vote); for each validator counted, the entries of its file not counted, and why.',
  })
  @ApiOkResponse({
    type: NetworkDesirabilitiesDto,
    description: 'The aggregate’s source; for the network, its age and who counted',
  })
  networkStatus(): Promise<NetworkDesirabilitiesDto> {
    return this.desirability.networkStatus();
  }
}

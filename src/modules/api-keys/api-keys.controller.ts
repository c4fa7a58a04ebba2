import {
  Body,
  Controller,
  Get,
  Header,
  HttpCode,
  Param,
  Patch,
  Post,
  Query,
  Res,
} from '@nestjs/common';
import type { Response } from 'express';
import { ApiOkResponse, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import { RequireMasterKey } from '../../common/access/access.decorators';
import { PrincipalId } from '../../common/auth/principal-id.decorator';
import { ClientGone } from '../../common/http/client-gone';
import { StatusDto } from '../../common/dto/status.dto';
import { ApiErrorResponses, JSON_BODY_ERRORS } from '../../common/errors/error-responses';
import { errorCase, validationCase } from '../../common/errors/error-cases';
import { ApiKeysService, KEY_ERRORS } from './api-keys.service';
import { ApiKeyCreateDto } from './dto/api-key-create.dto';
import { ApiKeyCreatedDto } from './dto/api-key-created.dto';
import { ApiKeyDetailDto } from './dto/api-key-detail.dto';
import { RATE_LIMIT_MAX } from '../../common/throttling/rate-limit-settings';
import { ApiKeyListQueryDto, MAX_KEYS_PAGE } from './dto/api-key-list-query.dto';
import { ApiKeyListDto, ApiKeySummaryDto } from './dto/api-key-summary.dto';
import { ApiKeyUpdateDto } from './dto/api-key-update.dto';

const KEY_NOT_FOUND = errorCase(404, 'keyNotFound', 'No key with this id', KEY_ERRORS.notFound);

/**
 * Looked up, not validated, as every path id: one that is no key's id (a UUID as listed) is a
 * 404, so the document claims no format a 422 would enforce.
 */
const KEY_ID_PARAM = {
  name: 'id',
  description: 'The id of the key (a UUID, as listed); any other text is a 404',
  example: '0b7d5a8e-3c4f-4e1a-9f2b-6d8c1e0a4b37',
};

/** Refusals of the fields a key is created and changed with alike. */
const KEY_FIELD_ERRORS = [
  validationCase('expiryInThePast', 'An expires_at that is not in the future', {
    loc: ['body', 'expires_at'],
    msg: 'Input should be in the future',
    type: 'datetime_future',
  }),
  validationCase('rateLimitTooLarge', `A rate_limit over ${RATE_LIMIT_MAX}`, {
    loc: ['body', 'rate_limit'],
    msg: `Input should be less than or equal to ${RATE_LIMIT_MAX}`,
    type: 'less_than_equal',
    ctx: { le: RATE_LIMIT_MAX },
  }),
];

/**
 * How soon a change is seen: a replica that misses the announcement trusts its copy for
 * KEY_CACHE_TTL_MS, which may be set up to 60 s, so no fixed bound is promised.
 */
const CHANGE_REACH =
  'Effective at once here and on every replica that hears of it over Redis; a replica that does ' +
  'not (no shared Redis, or Redis unreachable then) within `KEY_CACHE_TTL_MS` (0.5 s by default).';

/**
 * Key management's answers name keys, and a new key's holds the key itself: no cache, shared or
 * the client's, may keep them (a key admin audit; OWASP's REST Security Cheat Sheet). Errors do
 * not carry it: sendError (error-body.ts) drops a cache directive from every error answer.
 */
const NOT_KEPT = {
  'Cache-Control': {
    description: 'Never kept by a cache: the answer names keys, and a new key is in its answer',
    schema: { type: 'string', enum: ['no-store'] },
  },
};

@ApiTags('API keys')
// Not rate-limited: the master key must be able to deactivate a leaked key whatever it has spent.
@RequireMasterKey({ rateLimited: false })
@Controller('api/v1/keys')
export class ApiKeysController {
  constructor(private readonly keys: ApiKeysService) {}

  @Get()
  @Header('Cache-Control', 'no-store')
  @ApiOperation({
    operationId: 'listApiKeys',
    summary: 'List API keys',
    description:
      'Never returns a key or its hash: only a short display prefix. Oldest first; every key unless ' +
      '`is_active` filters or `offset` and `limit` page; the total over every page is in `X-Total-Count`.',
  })
  @ApiOkResponse({
    type: ApiKeyListDto,
    description: 'The issued keys the filter selects (every key by default), oldest first',
    headers: {
      ...NOT_KEPT,
      'X-Total-Count': {
        description: 'Keys the filter selects, over every page',
        schema: { type: 'integer', format: 'int32', minimum: 0 },
      },
    },
  })
  @ApiErrorResponses(
    validationCase('limitTooLarge', `limit over ${MAX_KEYS_PAGE}`, {
      loc: ['query', 'limit'],
      msg: `Input should be less than or equal to ${MAX_KEYS_PAGE}`,
      type: 'less_than_equal',
      ctx: { le: MAX_KEYS_PAGE },
    }),
  )
  async list(
    @Query() query: ApiKeyListQueryDto,
    @Res({ passthrough: true }) response: Response,
  ): Promise<ApiKeyListDto> {
    const isActive = query.is_active === undefined ? undefined : query.is_active === 'true';
    const { page, total } = await this.keys.list({ isActive }, query.limit, query.offset ?? 0);
    response.setHeader('X-Total-Count', String(total));
    return page;
  }

  @Get(':id')
  @Header('Cache-Control', 'no-store')
  @ApiOperation({
    operationId: 'getApiKey',
    summary: 'Get an API key and its budget',
    description:
      'One key, by its id, as listed, with `usage`: its budget as it stands (what its requests ' +
      'have used of the window running now, shared by every replica that shares Redis). Reading ' +
      "it does not count against the key's budget. Never returns the key or its hash.",
  })
  @ApiParam(KEY_ID_PARAM)
  @ApiOkResponse({
    type: ApiKeyDetailDto,
    description: 'The key, with its budget as it stands',
    headers: NOT_KEPT,
  })
  @ApiErrorResponses(KEY_NOT_FOUND)
  get(@Param('id') id: string): Promise<ApiKeyDetailDto> {
    return this.keys.get(id);
  }

  @Post()
  @HttpCode(200)
  @Header('Cache-Control', 'no-store')
  @ApiOperation({
    operationId: 'createApiKey',
    summary: 'Create an API key',
    description:
      'Returns the new key once; store it, it cannot be shown again. `tier` defaults to `regular`. ' +
      '`expires_at` (a future date-time with its offset) and `rate_limit` (requests per window, ' +
      "overriding the class's budget) are optional. Not idempotent: each call that is stored makes " +
      'a key. One whose client leaves before it is stored (a timeout) is not made; one whose answer ' +
      'is lost after it was stored is made, and is found in the listing by its name and ' +
      '`created_at`.',
  })
  @ApiOkResponse({
    type: ApiKeyCreatedDto,
    description: 'The new key, shown this once',
    headers: NOT_KEPT,
  })
  @ApiErrorResponses(
    ...JSON_BODY_ERRORS,
    validationCase('nameTooLong', 'A name over 100 characters', {
      loc: ['body', 'name'],
      msg: 'String should have at most 100 characters',
      type: 'string_too_long',
      ctx: { max_length: 100 },
    }),
    ...KEY_FIELD_ERRORS,
  )
  create(
    @Body() request: ApiKeyCreateDto,
    @PrincipalId() by: string,
    @ClientGone() gone: AbortSignal,
  ): Promise<ApiKeyCreatedDto> {
    return this.keys.create(request, by, gone);
  }

  @Patch(':id')
  @Header('Cache-Control', 'no-store')
  @ApiOperation({
    operationId: 'updateApiKey',
    summary: 'Update an API key',
    description:
      'Changes the name, the expiry or the own rate limit of an active key, by its id. Absent fields ' +
      'stay as they are; `null` clears `expires_at` or `rate_limit`. ' +
      CHANGE_REACH +
      ' A limit raised above the requests already counted in the window ends a ' +
      'running cool-down (429) at once; the count stays. A deactivated key cannot be changed (409). ' +
      'Safe to repeat; a change whose client leaves before it is stored (a timeout) is not made, so ' +
      'it cannot replace a change sent after it.',
  })
  @ApiParam(KEY_ID_PARAM)
  @ApiOkResponse({
    type: ApiKeySummaryDto,
    description: 'The key as it now is',
    headers: NOT_KEPT,
  })
  @ApiErrorResponses(
    KEY_NOT_FOUND,
    errorCase(409, 'keyDeactivated', 'The key is deactivated', KEY_ERRORS.deactivated),
    ...JSON_BODY_ERRORS,
    validationCase('nothingToChange', 'An empty body', {
      loc: ['body'],
      msg: 'Value error, give at least one of name, expires_at and rate_limit',
      type: 'value_error',
    }),
    ...KEY_FIELD_ERRORS,
  )
  update(
    @Param('id') id: string,
    @Body() request: ApiKeyUpdateDto,
    @PrincipalId() by: string,
    @ClientGone() gone: AbortSignal,
  ): Promise<ApiKeySummaryDto> {
    return this.keys.update(id, request, by, gone);
  }

  @Post(':key/deactivate')
  @HttpCode(200)
  @Header('Cache-Control', 'no-store')
  @ApiOperation({
    operationId: 'deactivateApiKey',
    summary: 'Deactivate an API key',
    description: `Takes the full key or its id. ${CHANGE_REACH}`,
  })
  @ApiParam({
    name: 'key',
    description: 'The full API key or its id',
    example: '0b7d5a8e-3c4f-4e1a-9f2b-6d8c1e0a4b37',
  })
  @ApiOkResponse({
    type: StatusDto,
    description: 'The key is deactivated (also when it already was)',
    headers: NOT_KEPT,
  })
  @ApiErrorResponses(KEY_NOT_FOUND, ...JSON_BODY_ERRORS)
  deactivate(@Param('key') key: string, @PrincipalId() by: string): Promise<StatusDto> {
    return this.keys.deactivate(key, by);
  }
}

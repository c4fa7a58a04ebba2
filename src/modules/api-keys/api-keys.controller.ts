import { Body, Controller, Get, HttpCode, Param, Post } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import { RequireMasterKey } from '../../common/auth/access.decorators';
import { StatusDto } from '../../common/dto/status.dto';
import {
  ApiErrorResponses,
  errorCase,
  JSON_BODY_ERRORS,
  validationCase,
} from '../../common/errors/error-responses';
import { ApiKeysService } from './api-keys.service';
import { ApiKeyCreateDto } from './dto/api-key-create.dto';
import { ApiKeyCreatedDto } from './dto/api-key-created.dto';
import { ApiKeyListDto } from './dto/api-key-summary.dto';

@ApiTags('API keys')
@RequireMasterKey()
@Controller('api/v1/keys')
export class ApiKeysController {
  constructor(private readonly keys: ApiKeysService) {}

  @Get()
  @ApiOperation({
    operationId: 'listApiKeys',
    summary: 'List API keys',
    description: 'Never returns a key or its hash: only a short display prefix.',
  })
  @ApiOkResponse({ type: ApiKeyListDto, description: 'Every issued key, active or not' })
  list(): Promise<ApiKeyListDto> {
    return this.keys.list();
  }

  @Post()
  @HttpCode(200)
  @ApiOperation({
    operationId: 'createApiKey',
    summary: 'Create an API key',
    description:
      'Returns the new key once; store it, it cannot be shown again. `tier` defaults to `regular`.',
  })
  @ApiOkResponse({ type: ApiKeyCreatedDto, description: 'The new key, shown this once' })
  @ApiErrorResponses(
    ...JSON_BODY_ERRORS,
    validationCase('nameTooLong', 'A name over 100 characters', {
      loc: ['body', 'name'],
      msg: 'String should have at most 100 characters',
      type: 'string_too_long',
      ctx: { max_length: 100 },
    }),
  )
  create(@Body() request: ApiKeyCreateDto): Promise<ApiKeyCreatedDto> {
    return this.keys.create(request);
  }

  @Post(':key/deactivate')
  @HttpCode(200)
  @ApiOperation({
    operationId: 'deactivateApiKey',
    summary: 'Deactivate an API key',
    description: 'Takes the full key or its id. Effective within one second.',
  })
  @ApiParam({ name: 'key', description: 'The full API key or its id' })
  @ApiOkResponse({
    type: StatusDto,
    description: 'The key is deactivated (also when it already was)',
  })
  @ApiErrorResponses(
    errorCase(404, 'keyNotFound', 'No key with this value or id', 'API key not found'),
    ...JSON_BODY_ERRORS,
  )
  deactivate(@Param('key') key: string): Promise<StatusDto> {
    return this.keys.deactivate(key);
  }
}

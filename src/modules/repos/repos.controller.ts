import { Controller, Get } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { RequireKey } from '../../common/access/access.decorators';
import { ApiErrorResponses } from '../../common/errors/error-responses';
import { errorCase } from '../../common/errors/error-cases';
import { NOT_READY_RETRY_AFTER_SECONDS } from '../../common/errors/retry-later';
import { RepoNamesResponseDto } from './dto/repo-names-response.dto';
import { NAMES_NOT_LOADED, NAMES_UNAVAILABLE, ReposService } from './repos.service';

@ApiTags('Repositories')
@Controller('api/v1')
export class ReposController {
  constructor(private readonly repos: ReposService) {}

  @Get('list_repo_names')
  @RequireKey()
  @ApiOperation({
    operationId: 'listRepoNames',
    summary: "Names of the miners' published dataset repositories",
    description:
      'Sorted (by code point) and unique, from the validation data file at `HF_RESULTS_PATH`, trimmed of surrounding white ' +
      'space, without `no_dataset_provided` and empty values; an empty list when no file is configured. 503 while the configured file has never been read successfully.',
  })
  @ApiOkResponse({ type: RepoNamesResponseDto, description: 'The repository names' })
  @ApiErrorResponses(
    errorCase(
      503,
      'notLoaded',
      'The file has not been read yet (Retry-After says when to come back)',
      NAMES_NOT_LOADED,
      { retryAfter: NOT_READY_RETRY_AFTER_SECONDS },
    ),
    errorCase(
      503,
      'fileUnavailable',
      'The file is missing, unreadable or invalid, and none of it was ever stored',
      `${NAMES_UNAVAILABLE} does not exist`,
    ),
  )
  listRepoNames(): Promise<RepoNamesResponseDto> {
    return this.repos.listRepoNames();
  }
}

import { Controller, Get } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { RequireKey } from '../../common/auth/access.decorators';
import { ApiErrorResponses } from '../../common/errors/error-responses';
import { RepoNamesResponseDto } from './dto/repo-names-response.dto';
import { ReposService } from './repos.service';

@ApiTags('Repositories')
@Controller('api/v1')
export class ReposController {
  constructor(private readonly repos: ReposService) {}

  @Get('list_repo_names')
  @RequireKey()
  @ApiOperation({ summary: "Names of the miners' published dataset repositories" })
  @ApiOkResponse({ type: RepoNamesResponseDto })
  @ApiErrorResponses(501, 503)
  listRepoNames(): Promise<RepoNamesResponseDto> {
    return this.repos.listRepoNames();
  }
}

import { Injectable, NotImplementedException } from '@nestjs/common';
import { RepoNamesResponseDto } from './dto/repo-names-response.dto';

@Injectable()
export class ReposService {
  // Served from the ingested validation file once issue #4 lands.
  listRepoNames(): Promise<RepoNamesResponseDto> {
    throw new NotImplementedException('Not implemented yet');
  }
}

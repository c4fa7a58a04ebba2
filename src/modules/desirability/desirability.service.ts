import { Injectable, NotImplementedException } from '@nestjs/common';
import { DesirabilityRequestDto } from './dto/desirability-request.dto';
import { GetDesirabilitiesQueryDto } from './dto/get-desirabilities-query.dto';

@Injectable()
export class DesirabilityService {
  // Submissions, the aggregate and the task lifecycle land with issue #5.
  submit(_request: DesirabilityRequestDto): Promise<Record<string, unknown>> {
    throw new NotImplementedException('Not implemented yet');
  }

  get(_query: GetDesirabilitiesQueryDto): Promise<unknown> {
    throw new NotImplementedException('Not implemented yet');
  }
}

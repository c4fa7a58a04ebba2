import { Injectable, NotImplementedException } from '@nestjs/common';
import { DataQueryRequestDto } from './dto/data-query-request.dto';
import { DataQueryResponseDto } from './dto/data-query-response.dto';

@Injectable()
export class DataQueryService {
  // Answered by the miner network once issue #3 lands.
  query(_request: DataQueryRequestDto): Promise<DataQueryResponseDto> {
    throw new NotImplementedException('Not implemented yet');
  }
}

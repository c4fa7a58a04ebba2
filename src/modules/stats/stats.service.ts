import { Injectable, NotImplementedException } from '@nestjs/common';
import { Source } from '../../common/source';
import { AgeSizeDto, LabelBytesDto, LabelSizeDto } from './dto/stats-responses.dto';
import { QueryBucketQueryDto } from './dto/stats-requests.dto';

/** Statistics over the miners' index; answered from incremental aggregates once issue #4 lands. */
@Injectable()
export class StatsService {
  topLabels(_source: Source): Promise<LabelSizeDto[]> {
    throw new NotImplementedException('Not implemented yet');
  }

  ages(_source: Source): Promise<AgeSizeDto[]> {
    throw new NotImplementedException('Not implemented yet');
  }

  bytesByLabel(_label: string): Promise<LabelBytesDto> {
    throw new NotImplementedException('Not implemented yet');
  }

  queryBucket(_source: Source, _query: QueryBucketQueryDto): Promise<Record<string, unknown>> {
    throw new NotImplementedException('Not implemented yet');
  }
}

import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { MAX_DESIRABILITY_JOBS } from '../../../config/environment-variables';

@ApiSchema({ name: 'DesirabilitySubmitted' })
export class DesirabilitySubmittedDto {
  @ApiProperty({ enum: ['success'], example: 'success' })
  status: 'success';

  @ApiProperty({ example: 'Vote of 5F… saved: 2 jobs (1 newly registered task)' })
  message: string;

  @ApiProperty({
    description: 'Every task id of the vote, new and already registered, in submission order',
    type: [String],
    maxItems: MAX_DESIRABILITY_JOBS,
    example: ['tao-x', 'reddit-r-bittensor_-5d6f3c1a9b2e'],
  })
  tasks: string[];
}

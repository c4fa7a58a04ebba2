import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { MAX_DESIRABILITY_JOBS } from '../../../config/environment-variables';

@ApiSchema({ name: 'DesirabilitySubmitted' })
export class DesirabilitySubmittedDto {
  @ApiProperty({ enum: ['success'], example: 'success' })
  status: 'success';

  @ApiProperty({
    example:
      'Vote of 5F… saved: 2 jobs (1 newly registered task); publication to the network pending (GET /api/v1/desirabilities/publication)',
  })
  message: string;

  @ApiProperty({
    description: 'Every task id of the vote, new and already registered, in submission order',
    type: [String],
    maxItems: MAX_DESIRABILITY_JOBS,
    example: ['tao-x', 'reddit-r-bittensor_-5d6f3c1a9b2e'],
  })
  tasks: string[];

  @ApiProperty({
    enum: ['pending', 'disabled'],
    description:
      '`pending`: the vote will be pushed to the Gravity repository and committed on chain in the ' +
      'background (follow it at GET /api/v1/desirabilities/publication); `disabled`: publication is ' +
      'off (GRAVITY_REPO_URL or SUBTENSOR_URL not set, or an https repository without GRAVITY_TOKEN; ' +
      '`message` says which), and the vote is local to this gateway only',
    example: 'pending',
  })
  publication: 'pending' | 'disabled';

  @ApiPropertyOptional({
    description:
      'Present when `publication` is `pending` and the vote has keyword-only jobs (no label): ' +
      'their ids. They are stored and registered as tasks here, but left out of the vote ' +
      'published to the network: the subnet’s validators read the Gravity repository with code ' +
      'that fails on a job without a label and then ignores every vote (docs/decisions.md, ' +
      '"Keyword-only jobs are not published")',
    type: [String],
    maxItems: MAX_DESIRABILITY_JOBS,
    example: ['halving-x'],
  })
  not_published?: string[];
}

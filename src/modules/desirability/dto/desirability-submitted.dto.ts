import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { MAX_DESIRABILITY_JOBS } from '../../../config/environment-variables';

/**
 * What the service answers to DESIRABILITY_REQUEST_EXAMPLE with publication on, `tao-x` already
 * registered (desirability-submitted.dto.spec.ts builds it with the service's own code).
 */
export const DESIRABILITY_SUBMITTED_EXAMPLE = {
  status: 'success',
  message:
    'Vote of 5F4tQyWrhfGVcNhoqeiNsR6KjD4wMZ2kfhLj4oHYuyHbZAc3 saved: 3 jobs (2 newly registered ' +
    'tasks); publication to the network pending (GET /api/v1/desirabilities/publication); ' +
    "keyword-only jobs kept here but not published, as the subnet's validators cannot read a job " +
    'without a label: halving-x',
  tasks: ['tao-x', 'reddit-r-bittensor_-17ae2172c58e', 'halving-x'],
  publication: 'pending',
  not_published: ['halving-x'],
} satisfies DesirabilitySubmittedDto;

@ApiSchema({ name: 'DesirabilitySubmitted' })
export class DesirabilitySubmittedDto {
  @ApiProperty({ enum: ['success'], example: DESIRABILITY_SUBMITTED_EXAMPLE.status })
  status: 'success';

  @ApiProperty({
    example: DESIRABILITY_SUBMITTED_EXAMPLE.message,
  })
  message: string;

  @ApiProperty({
    description: 'Every task id of the vote, new and already registered, in submission order',
    type: [String],
    maxItems: MAX_DESIRABILITY_JOBS,
    example: DESIRABILITY_SUBMITTED_EXAMPLE.tasks,
  })
  tasks: string[];

  @ApiProperty({
    enum: ['pending', 'disabled'],
    description:
      '`pending`: the vote will be pushed to the Gravity repository and committed on chain in the ' +
      'background (follow it at GET /api/v1/desirabilities/publication); `disabled`: publication is ' +
      'off (GRAVITY_REPO_URL or SUBTENSOR_URL not set, or an https repository without GRAVITY_TOKEN; ' +
      '`message` says which), and the vote is local to this gateway only',
    example: DESIRABILITY_SUBMITTED_EXAMPLE.publication,
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
    example: DESIRABILITY_SUBMITTED_EXAMPLE.not_published,
  })
  not_published?: string[];
}

import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import {
  MAX_DESIRABILITY_JOBS,
  MAX_DESIRABILITY_SYNC_INTERVAL,
} from '../../../config/environment-variables';

const HOTKEY_EXAMPLE = '5F4tQyWrhfGVcNhoqeiNsR6KjD4wMZ2kfhLj4oHYuyHbZAc3';
const SHA_EXAMPLE = '3f786850e387550fdab836ed7e6dc881de23001b';
const BLOCK = { type: 'integer', format: 'int64', minimum: 0 } as const;
/**
 * Validators counted: each is a distinct neuron of the chain's metagraph (network mode needs
 * SUBTENSOR_URL), and uids are u16 on chain.
 */
const MAX_COUNTED_VALIDATORS = 65_536;

@ApiSchema({
  name: 'CountedValidator',
  description: 'A validator whose vote is in the aggregate',
})
export class CountedValidatorDto {
  @ApiProperty({ example: HOTKEY_EXAMPLE })
  hotkey: string;

  @ApiProperty({
    type: 'number',
    format: 'double',
    minimum: 0,
    nullable: true,
    description:
      'Stake weight on the subnet in alpha (α: alpha stake plus 0.18 × root TAO stake; not TAO), from the metagraph; null when the metagraph has no stakes (validators then share equally)',
    example: 120345.5,
  })
  stake: number | null;

  @ApiProperty({
    type: 'number',
    format: 'double',
    minimum: 0,
    maximum: 1,
    description: 'Its part of the validators’ 70 %: its stake over the counted validators’ stake',
    example: 0.25,
  })
  share: number;

  @ApiProperty({ description: 'The commit it committed on chain', example: SHA_EXAMPLE })
  sha: string;

  @ApiProperty({ ...BLOCK, description: 'The block of its commitment', example: 6852690 })
  block: number;

  @ApiProperty({
    type: 'integer',
    format: 'int32',
    minimum: 0,
    maximum: MAX_DESIRABILITY_JOBS,
    description:
      'Jobs of its file counted, as the subnet’s reader counts them (0 when none is on x or reddit: its share ' +
      'still counts, as the subnet’s reader counts it)',
    example: 12,
  })
  jobs: number;

  @ApiPropertyOptional({
    type: [String],
    maxItems: MAX_DESIRABILITY_JOBS,
    description:
      'Entries of its file not counted (a platform this gateway does not serve, what the subnet’s reader ' +
      'skips) or counted otherwise than written (a date Python cannot read), one sentence each; absent when none',
    example: ['entry 2 (id "yt-1"): platform "youtube" is not one this gateway serves (x, reddit)'],
  })
  notes?: string[];
}

@ApiSchema({
  name: 'SkippedValidator',
  description: 'A commitment that counts as no vote, and why',
})
export class SkippedValidatorDto {
  @ApiProperty({ example: HOTKEY_EXAMPLE })
  hotkey: string;

  @ApiProperty({
    example: `commit ${SHA_EXAMPLE} is not in the Gravity repository`,
    description:
      'Not a git SHA, not a validator (a permit and VALIDATOR_MIN_STAKE), the commit or the file missing from the repository, ' +
      'a file the subnet’s reader would fail on or its uploaders never write, or a withdrawn vote',
  })
  reason: string;

  @ApiPropertyOptional({ description: 'The SHA committed, when it is one', example: SHA_EXAMPLE })
  sha?: string;

  @ApiPropertyOptional({ ...BLOCK, description: 'The block of its commitment', example: 6852690 })
  block?: number;
}

@ApiSchema({ name: 'AggregateAttempt' })
export class AggregateAttemptDto {
  @ApiProperty({ example: false })
  ok: boolean;

  @ApiProperty({ format: 'date-time', example: '2026-01-05T12:00:00.000Z' })
  at: string;

  @ApiPropertyOptional({ example: 'The chain cannot be read now: no answer within 30000 ms' })
  error?: string;
}

@ApiSchema({
  name: 'NetworkDesirabilities',
  description: 'How the aggregate of `get_desirabilities` was made',
})
export class NetworkDesirabilitiesDto {
  @ApiProperty({
    enum: ['network', 'local'],
    example: 'network',
    description:
      '`network`: validators’ commitments on chain and their files in the Gravity repository ' +
      '(SUBTENSOR_URL and GRAVITY_REPO_URL set); `local`: the votes stored in this gateway’s database',
  })
  source: 'network' | 'local';

  @ApiPropertyOptional({
    format: 'date-time',
    description: 'When the aggregate served was computed (network only; absent before the first)',
    example: '2026-01-05T12:00:00.000Z',
  })
  computed_at?: string;

  @ApiPropertyOptional({
    type: 'integer',
    format: 'int64',
    minimum: 0,
    description: 'Whole seconds since `computed_at`',
    example: 310,
  })
  age_seconds?: number;

  @ApiPropertyOptional({
    ...BLOCK,
    description: 'The metagraph block the stakes were read at',
    example: 6852690,
  })
  block?: number;

  @ApiProperty({
    type: 'integer',
    format: 'int32',
    minimum: 1,
    maximum: MAX_DESIRABILITY_SYNC_INTERVAL,
    description: 'DESIRABILITY_SYNC_INTERVAL, in seconds',
    example: 1200,
  })
  sync_interval_seconds: number;

  @ApiProperty({
    type: [CountedValidatorDto],
    maxItems: MAX_COUNTED_VALIDATORS,
    description: 'Validators counted (network only)',
  })
  validators: CountedValidatorDto[];

  @ApiProperty({
    type: [SkippedValidatorDto],
    description: 'Commitments that count as no vote (network only)',
  })
  skipped: SkippedValidatorDto[];

  @ApiPropertyOptional({
    type: AggregateAttemptDto,
    description:
      'The latest attempt that ended, by any replica (a failed one leaves the last good aggregate served, and is retried within seconds to minutes)',
  })
  last_attempt?: AggregateAttemptDto;
}

import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { PUBLICATION_STATES, PublicationState } from '../publication.types';

/**
 * `last_error` as the worker writes it when the chain refuses a commitment by its space rule; the
 * worker's spec expects exactly this text, so the example cannot drift from it.
 */
export const LAST_ERROR_EXAMPLE =
  'rate limited by the chain: commitments.SpaceLimitExceeded: Space Limit Exceeded for the ' +
  'current interval';

@ApiSchema({
  name: 'PublicationStatus',
  description:
    'How far this validator’s newest vote got on its way to the network: pushed to the Gravity ' +
    'repository as validator_preferences/<hotkey>.json, then its commit SHA committed on chain',
})
export class PublicationStatusDto {
  @ApiProperty({
    enum: PUBLICATION_STATES,
    description:
      '`disabled`: GRAVITY_REPO_URL or SUBTENSOR_URL is not set (or GRAVITY_TOKEN, for an https:// repository), votes stay local to this gateway; ' +
      '`none`: no vote submitted yet; ' +
      '`pending`: to be pushed; `pushed`: in the repository, its SHA to be committed on chain; ' +
      '`committed`: on chain, in `block_number`; `failed`: the last attempt failed (`last_error`), ' +
      'retried at `next_attempt_at`',
    example: 'committed',
  })
  state: PublicationState;

  @ApiProperty({
    description: 'What the state means for this vote, in a sentence',
    example: 'No vote submitted yet',
  })
  message: string;

  @ApiProperty({
    description: 'The validator hotkey the vote is published under',
    example: '5F4tQyWrhfGVcNhoqeiNsR6KjD4wMZ2kfhLj4oHYuyHbZAc3',
  })
  hotkey: string;

  @ApiPropertyOptional({
    description: 'The Gravity repository and branch votes are pushed to (no credential)',
    example: 'https://github.com/macrocosm-os/gravity#main',
  })
  repository?: string;

  @ApiPropertyOptional({
    format: 'date-time',
    description: 'When the vote was submitted',
    example: '2026-11-20T12:00:00.000Z',
  })
  voted_at?: string;

  @ApiPropertyOptional({
    description: 'The Gravity commit holding the vote (once pushed)',
    pattern: '^[0-9a-f]{40}$',
    example: '3f786850e387550fdab836ed7e6dc881de23001b',
  })
  commit_sha?: string;

  @ApiPropertyOptional({ format: 'date-time', example: '2026-11-20T12:00:03.000Z' })
  pushed_at?: string;

  @ApiPropertyOptional({
    type: 'integer',
    format: 'int64',
    minimum: 0,
    description: 'Block the commitment was included in (once committed)',
    example: 6852691,
  })
  block_number?: number;

  @ApiPropertyOptional({
    description:
      'Hash of that block; absent when the commitment was found on chain (made before a restart) rather than seen included',
    example: '0xd13b4bc4d1facfd54debfe05cacd593daf0a0c1cf69a4713eda3fec7d8c4d2a7',
  })
  block_hash?: string;

  @ApiPropertyOptional({ format: 'date-time', example: '2026-11-20T12:00:18.000Z' })
  committed_at?: string;

  @ApiPropertyOptional({
    description: 'Why the last attempt did not finish (a failure, or the chain’s rate limit)',
    example: LAST_ERROR_EXAMPLE,
  })
  last_error?: string;

  @ApiPropertyOptional({
    format: 'date-time',
    description: 'When the next attempt is due (while not committed)',
    example: '2026-11-20T13:12:00.000Z',
  })
  next_attempt_at?: string;

  @ApiPropertyOptional({
    format: 'date-time',
    description:
      'While an attempt is under way (or a replica that stopped mid-attempt still holds the ' +
      'vote): until when that replica holds it (PUBLICATION_LEASE_MS); no other replica takes ' +
      'the vote over before, whatever `next_attempt_at` says',
    example: '2026-11-20T12:01:05.000Z',
  })
  claimed_until?: string;

  @ApiProperty({
    type: 'integer',
    format: 'int32',
    minimum: 0,
    description: 'Consecutive failed attempts',
    example: 0,
  })
  attempts: number;
}

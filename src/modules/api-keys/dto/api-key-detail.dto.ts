import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { MAX_DURATION_SECONDS } from '../../../config/setting-forms';
import { RATE_LIMIT_MAX, RATE_LIMIT_MIN } from '../../../common/throttling/rate-limit-settings';
import { ApiKeySummaryDto } from './api-key-summary.dto';

/** A count of requests: never negative, never over the largest budget a key can have. */
const COUNT = { type: 'integer', format: 'int32', minimum: 0, maximum: RATE_LIMIT_MAX } as const;
/** Whole seconds, rounded up, within the longest window the settings allow. */
const SECONDS = {
  type: 'integer',
  format: 'int32',
  minimum: 0,
  maximum: MAX_DURATION_SECONDS,
} as const;

/**
 * A key's budget as it stands, read without counting a request: the numbers its next request's
 * rate-limit headers would start from (a key admin's view of who is near their limit).
 */
@ApiSchema({ name: 'APIKeyUsage' })
export class ApiKeyUsageDto {
  @ApiProperty({
    ...COUNT,
    minimum: RATE_LIMIT_MIN,
    description:
      "Requests per window the key is counted against: its own `rate_limit`, else its class's",
    example: 1000,
  })
  limit: number;

  @ApiProperty({ ...SECONDS, minimum: 1, description: 'The length of a window', example: 3600 })
  window_seconds: number;

  @ApiProperty({
    ...COUNT,
    description:
      'Requests counted in the window running now (on every replica, when they share Redis); ' +
      '0 when none runs. Refused requests are not counted',
    example: 212,
  })
  used: number;

  @ApiProperty({
    ...COUNT,
    description:
      'Requests left in the window (`X-RateLimit-Remaining`); 0 while `rate_limited`, or when ' +
      'a lowered limit is under `used`',
    example: 788,
  })
  remaining: number;

  @ApiProperty({
    ...SECONDS,
    description:
      "Seconds until the budget is whole again if the key sends nothing more: the window's end, " +
      "or the cool-down's while `rate_limited` (`X-RateLimit-Reset`); 0 when no window runs. " +
      'With nothing `remaining`, a request sent before then is refused and starts a cool-down ' +
      'of a whole window (its `Retry-After`)',
    example: 1740,
  })
  resets_in_seconds: number;

  @ApiProperty({
    description:
      'True while the key is in its cool-down: its requests are answered 429 until it ends',
    example: false,
  })
  rate_limited: boolean;
}

@ApiSchema({ name: 'APIKeyDetail' })
export class ApiKeyDetailDto extends ApiKeySummaryDto {
  @ApiProperty({ type: ApiKeyUsageDto })
  usage: ApiKeyUsageDto;
}

import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional, Max, Min } from 'class-validator';
import { IsInteger } from '../../../common/validation/is-integer';

/** Most keys on one page: the list without `limit` is every key, as the interface has it. */
export const MAX_KEYS_PAGE = 1000;

export class ApiKeyListQueryDto {
  @ApiPropertyOptional({
    type: 'string',
    enum: ['true', 'false'],
    description:
      'Only keys not deactivated (`true`; an expired key is still listed) or only deactivated ones (`false`)',
  })
  @IsOptional()
  @IsIn(['true', 'false'])
  is_active?: 'true' | 'false';

  @ApiPropertyOptional({
    type: 'integer',
    format: 'int32',
    minimum: 1,
    maximum: MAX_KEYS_PAGE,
    description: 'Keys per page, oldest first. Without it, every key the filter selects.',
  })
  @IsOptional()
  @IsInteger()
  @Min(1)
  @Max(MAX_KEYS_PAGE)
  limit?: number;

  // Bounded so that Postgres' OFFSET (bigint) never sees 1e300, as the other lists are.
  @ApiPropertyOptional({
    type: 'integer',
    format: 'int32',
    minimum: 0,
    maximum: 2147483647,
    default: 0,
  })
  @IsOptional()
  @IsInteger()
  @Min(0)
  @Max(2147483647)
  offset?: number;
}

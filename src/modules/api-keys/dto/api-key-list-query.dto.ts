import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional, Max, Min } from 'class-validator';
import { IsInteger } from '../../../common/validation/is-integer';
import { PageOffset } from '../../../common/validation/page-offset';

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
    description:
      'Keys per page, oldest first. Without it, every key the filter selects (after `offset`).',
  })
  @IsOptional()
  @IsInteger()
  @Min(1)
  @Max(MAX_KEYS_PAGE)
  limit?: number;

  @PageOffset('Keys to skip, oldest first')
  offset?: number;
}

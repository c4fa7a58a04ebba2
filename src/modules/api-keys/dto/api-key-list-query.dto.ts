import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional } from 'class-validator';
import { PageLimit } from '../../../common/validation/page-limit';
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

  @PageLimit(MAX_KEYS_PAGE, {
    description:
      'Keys per page, oldest first. Without it, every key the filter selects (after `offset`).',
    paged: false,
  })
  limit?: number;

  @PageOffset('Keys to skip, oldest first')
  offset?: number;
}

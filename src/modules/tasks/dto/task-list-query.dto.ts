import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional, Max, Min } from 'class-validator';
import { TASK_STATES, TaskState } from '../task.types';
import { IsInteger } from '../../../common/validation/is-integer';

export class TaskListQueryDto {
  @ApiPropertyOptional({ enum: TASK_STATES, description: 'Only tasks in this state' })
  @IsOptional()
  @IsIn(TASK_STATES)
  state?: TaskState;

  @ApiPropertyOptional({
    type: 'integer',
    format: 'int32',
    minimum: 1,
    maximum: 500,
    default: 100,
  })
  @IsOptional()
  @IsInteger()
  @Min(1)
  @Max(500)
  limit?: number;

  // Bounded so that Postgres' OFFSET (bigint) never sees 1e300 (a 500, found by fuzzing).
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

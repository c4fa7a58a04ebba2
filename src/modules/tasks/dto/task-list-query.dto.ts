import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional, IsString } from 'class-validator';
import { TASK_STATES, TaskState } from '../task.types';
import { PageLimit } from '../../../common/validation/page-limit';
import { PageOffset } from '../../../common/validation/page-offset';
import { IsRfc3339DateTimeInQuery } from '../../../common/validation/is-iso-date';

export class TaskListQueryDto {
  @ApiPropertyOptional({ enum: TASK_STATES, description: 'Only tasks in this state' })
  @IsOptional()
  @IsIn(TASK_STATES)
  state?: TaskState;

  // No `example`: Swagger UI's try-it-out sends a parameter's example, and a past instant here
  // listed only the tasks completed since (often none), as if there were no tasks at all.
  @ApiPropertyOptional({
    type: String,
    format: 'date-time',
    maxLength: 64,
    description:
      'Only tasks completed after this instant (an RFC 3339 date-time with its UTC offset, such as ' +
      '`2026-11-24T12:00:00Z`), listed in the order they completed rather than newest first: a task ' +
      'completing later joins the end, so paging with `offset` misses none. To poll for new ' +
      'datasets, pass the last listed task’s `completed_at`. Send an offset’s `+` as `%2B` ' +
      '(`%2B01:00`): a `+` in a query string reads as a space.',
  })
  @IsOptional()
  @IsString()
  @IsRfc3339DateTimeInQuery()
  completed_after?: string;

  @PageLimit(500, { paged: true })
  limit?: number;

  @PageOffset('Tasks to skip, in the order listed')
  offset?: number;
}

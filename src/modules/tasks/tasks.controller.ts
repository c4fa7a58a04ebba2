import { Controller, Get, HttpCode, Param, Post, Query, Res } from '@nestjs/common';
import {
  ApiAcceptedResponse,
  ApiOkResponse,
  ApiOperation,
  ApiParam,
  ApiTags,
} from '@nestjs/swagger';
import type { Response } from 'express';
import { RequireKey, RequireMasterKey } from '../../common/access/access.decorators';
import { ApiErrorResponses, JSON_BODY_ERRORS } from '../../common/errors/error-responses';
import { errorCase, validationCase } from '../../common/errors/error-cases';
import { RECOMPILED_TASK_EXAMPLES, TASK_EXAMPLES, TASK_LIST_EXAMPLES } from './dto/task.examples';
import { TaskDto, TaskListDto } from './dto/task.dto';
import { TaskListQueryDto } from './dto/task-list-query.dto';
import { recompileRefused, TasksService } from './tasks.service';
import { TASK_ID, TASK_NOT_FOUND } from './task-route-docs';
import { parseRfc3339DateTime } from '../../common/validation/iso-date';
import { DEFAULT_PAGE_LIMIT } from '../../common/validation/page-limit';

@ApiTags('Scraping tasks')
// Access per operation, not per class: reading needs any key, a recompile the master key.
@Controller('api/v1/tasks')
export class TasksController {
  constructor(private readonly tasks: TasksService) {}

  @Get()
  @RequireKey()
  @ApiOperation({
    operationId: 'listTasks',
    summary: 'List scraping tasks',
    description:
      'Newest first; filter by `state`. With `completed_after`, the tasks completed since then, in the ' +
      'order they completed: what a pipeline polls for new datasets. The total over every page is in ' +
      '`X-Total-Count`.',
  })
  @ApiOkResponse({
    type: TaskListDto,
    description: 'One page of tasks, newest first (with `completed_after`: first completed first)',
    examples: TASK_LIST_EXAMPLES,
    headers: {
      'X-Total-Count': {
        description: 'Tasks the filter selects, over every page',
        schema: { type: 'integer', format: 'int32', minimum: 0 },
      },
    },
  })
  @ApiErrorResponses(
    validationCase('limitTooLarge', 'limit over 500', {
      loc: ['query', 'limit'],
      msg: 'Input should be less than or equal to 500',
      type: 'less_than_equal',
      ctx: { le: 500 },
    }),
  )
  async list(
    @Query() query: TaskListQueryDto,
    @Res({ passthrough: true }) response: Response,
  ): Promise<TaskListDto> {
    const completedAfter =
      query.completed_after === undefined ? undefined : parseRfc3339DateTime(query.completed_after);
    const { page, total } = await this.tasks.list(
      { state: query.state, completedAfter },
      query.limit ?? DEFAULT_PAGE_LIMIT,
      query.offset ?? 0,
    );
    response.setHeader('X-Total-Count', String(total));
    return page;
  }

  @Get(':id')
  @RequireKey()
  @ApiOperation({
    operationId: 'getTask',
    summary: 'A scraping task: state, counts, expiry, progress, dataset',
    description:
      'A task collects for seven days (`active`), is compiled into its dataset (`compiling`) and ' +
      'is then `completed`, with `dataset` (its size, hashes and `download_url`), or `failed` ' +
      'after its compiles failed (`failure_reason`).',
  })
  @ApiParam(TASK_ID)
  @ApiOkResponse({ type: TaskDto, description: 'The task', examples: TASK_EXAMPLES })
  @ApiErrorResponses(TASK_NOT_FOUND)
  get(@Param('id') id: string): Promise<TaskDto> {
    return this.tasks.get(id);
  }

  @Post(':id/recompile')
  @HttpCode(202)
  @RequireMasterKey()
  @ApiOperation({
    operationId: 'recompileTask',
    summary: 'Send a failed task back to compiling (master key)',
    description:
      "A `failed` task's collected items are kept: this sends it back to `compiling` with its " +
      'compile attempts and their backoff reset, so the next lifecycle pass (within ' +
      '`TASK_LIFECYCLE_TICK`) compiles its dataset from them, as after the fault that failed it ' +
      'is fixed (a full disk freed). Answered at once with the task, `compiling`; its ' +
      '`failure_reason` still says why it failed until a compile succeeds. Watch the task for ' +
      '`completed` (or `failed` again, after `TASK_MAX_COMPILE_ATTEMPTS` new attempts). 409 for a ' +
      'task in another state, also for the second of two calls at once.',
  })
  @ApiParam(TASK_ID)
  @ApiAcceptedResponse({
    type: TaskDto,
    description: 'The task, now `compiling`, as `getTask` shows it',
    examples: RECOMPILED_TASK_EXAMPLES,
  })
  @ApiErrorResponses(
    TASK_NOT_FOUND,
    errorCase(
      409,
      'notFailedActive',
      'The task is active (still collecting)',
      recompileRefused('tao-x', 'active'),
    ),
    errorCase(
      409,
      'notFailedCompiling',
      'The task is compiling (also: sent back by another call just before)',
      recompileRefused('tao-x', 'compiling'),
    ),
    errorCase(
      409,
      'notFailedCompleted',
      'The task is completed: its dataset is written',
      recompileRefused('tao-x', 'completed'),
    ),
    ...JSON_BODY_ERRORS,
  )
  recompile(@Param('id') id: string): Promise<TaskDto> {
    return this.tasks.recompile(id);
  }
}

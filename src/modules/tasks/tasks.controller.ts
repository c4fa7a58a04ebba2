import { Controller, Get, Param, Query, Res, StreamableFile } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { RequireKey } from '../../common/auth/access.decorators';
import { ApiErrorResponses } from '../../common/errors/error-responses';
import { DatasetDownloadService } from './dataset-download.service';
import { DatasetQueryDto } from './dto/dataset-query.dto';
import { DATASET_CONTENT_TYPES } from './task.mapper';
import { TaskDto, TaskListDto } from './dto/task.dto';
import { TaskListQueryDto } from './dto/task-list-query.dto';
import { TasksService } from './tasks.service';

@ApiTags('Scraping tasks')
@RequireKey()
@Controller('api/v1/tasks')
export class TasksController {
  constructor(
    private readonly tasks: TasksService,
    private readonly downloads: DatasetDownloadService,
  ) {}

  @Get()
  @ApiOperation({ summary: 'List scraping tasks', description: 'Newest first; filter by `state`.' })
  @ApiOkResponse({ type: TaskListDto })
  @ApiErrorResponses(422)
  list(@Query() query: TaskListQueryDto): Promise<TaskListDto> {
    return this.tasks.list(query.state, query.limit ?? 100, query.offset ?? 0);
  }

  @Get(':id')
  @ApiOperation({ summary: 'A scraping task: state, counts, expiry, progress, dataset' })
  @ApiParam({ name: 'id', description: 'Task id (the job id of the vote that registered it)' })
  @ApiOkResponse({ type: TaskDto })
  @ApiErrorResponses(404)
  get(@Param('id') id: string): Promise<TaskDto> {
    return this.tasks.get(id);
  }

  @Get(':id/dataset')
  @ApiOperation({
    summary: "Download a completed task's dataset",
    description:
      'One item per row, oldest first: gzip-compressed JSON lines (`format=jsonl`, the default) or Parquet ' +
      '(`format=parquet`: flat typed columns, lists as Parquet lists, datetimes as UTC timestamps; the ' +
      'columns are listed in the README). `Content-Length` and `X-Content-SHA256` (hex SHA-256 of the ' +
      "file, as in the task's `dataset`) are set. 409 while the task is not completed.",
  })
  @ApiParam({ name: 'id' })
  // The 200's media types are declared here only: errors stay JSON (`@ApiProduces` would declare
  // them as files too).
  @ApiOkResponse({
    description: 'The dataset file, in the format asked for',
    content: {
      [DATASET_CONTENT_TYPES.jsonl]: { schema: { type: 'string', format: 'binary' } },
      [DATASET_CONTENT_TYPES.parquet]: { schema: { type: 'string', format: 'binary' } },
    },
    headers: {
      'X-Content-SHA256': {
        description: "Hex SHA-256 of the file sent, as listed in the task's `dataset`",
        schema: { type: 'string', pattern: '^[0-9a-f]{64}$' },
      },
      'Content-Disposition': {
        description: '`attachment; filename="<id>.jsonl.gz"` or `"<id>.parquet"`',
        schema: { type: 'string' },
      },
    },
  })
  @ApiErrorResponses(404, 409, 422, 503)
  async download(
    @Param('id') id: string,
    @Query() query: DatasetQueryDto,
    @Res({ passthrough: true }) response: Response,
  ): Promise<StreamableFile> {
    const { file, sha256 } = await this.downloads.open(id, query.format ?? 'jsonl');
    response.setHeader('X-Content-SHA256', sha256);
    return file;
  }
}

import {
  applyDecorators,
  Controller,
  Get,
  Param,
  Query,
  Req,
  Res,
  StreamableFile,
} from '@nestjs/common';
import {
  ApiHeader,
  ApiOkResponse,
  ApiOperation,
  ApiParam,
  ApiResponse,
  ApiTags,
} from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { RequireKey } from '../../common/access/access.decorators';
import { addToRequestLine } from '../../common/logging/request-logging';
import { ApiErrorResponses } from '../../common/errors/error-responses';
import { RequestHeaders } from '../../common/errors/request-headers';
import { errorCase, validationCase } from '../../common/errors/error-cases';
import { enumError } from '../../common/errors/pydantic-errors';
import { DatasetDownloadService } from './dataset-download.service';
import {
  fileMissing,
  modifiedSince,
  notCompleted,
  PARQUET_BUSY_RETRY_AFTER_SECONDS,
  parquetBusy,
  parquetUnavailable,
  preconditionFailed,
  taskFailed,
} from './dataset-download-errors';
import { entityTag } from './dataset-conditions';
import { DatasetQueryDto } from './dto/dataset-query.dto';
import { DATASET_CONDITION_HEADERS, DatasetConditionsDto } from './dto/dataset-conditions.dto';
import { DATASET_CONTENT_TYPES } from './task.mapper';
import { DATASET_FORMATS } from './task.types';
import { formatHttpDate } from '../../common/http/http-date';
import { TASK_ID, TASK_NOT_FOUND } from './task-route-docs';

/** The file's validators, sent with the 304 and the 412 too: what the file is now. */
const FILE_VALIDATOR_HEADERS = {
  ETag: {
    description: "The file's SHA-256 in quotes",
    schema: { type: 'string', pattern: '^"[0-9a-f]{64}"$', maxLength: 66 },
  },
  'X-Content-SHA256': {
    description: "Hex SHA-256 of the file, as listed in the task's `dataset`",
    schema: { type: 'string', pattern: '^[0-9a-f]{64}$', maxLength: 64 },
  },
  'Last-Modified': {
    description:
      'When the file was written (an IMF-fixdate, to the second), as the task records it: the ' +
      'same on every server. Absent for a task completed by a release that recorded no time',
    schema: {
      type: 'string',
      pattern:
        '^(Mon|Tue|Wed|Thu|Fri|Sat|Sun), [0-9]{2} (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) ' +
        '[0-9]{4} [0-9]{2}:[0-9]{2}:[0-9]{2} GMT$',
      maxLength: 29,
    },
  },
};
/**
 * How the file may be kept and fetched, sent with the 304 too: RFC 9110 §15.4.5 has a 304 send
 * the Cache-Control a 200 would. Not with the 412, an error, which is not kept.
 */
const FILE_CACHE_HEADERS = {
  'Cache-Control': {
    description:
      'A cache keeps the file but asks again (If-None-Match or If-Modified-Since) before using it',
    schema: { type: 'string', enum: ['private, no-cache'] },
  },
  'Accept-Ranges': {
    description:
      'Ranges are not served: a request with `Range` gets the whole file (200), so a broken-off ' +
      'download starts over',
    schema: { type: 'string', enum: ['none'] },
  },
};

/**
 * A task's dataset file. Its own controller for the file's headers and conditions; the same tag
 * and path prefix as TasksController, and registered after it (tasks.module.ts), so that the
 * OpenAPI document lists the download after the task's other operations, as before.
 */
@ApiTags('Scraping tasks')
@Controller('api/v1/tasks')
export class TaskDatasetsController {
  constructor(private readonly downloads: DatasetDownloadService) {}

  @Get(':id/dataset')
  @RequireKey()
  @ApiOperation({
    operationId: 'downloadTaskDataset',
    summary: "Download a completed task's dataset",
    description:
      'One item per row, oldest first: gzip-compressed JSON lines (`format=jsonl`, the default) or Parquet ' +
      '(`format=parquet`: flat typed columns, lists as Parquet lists, datetimes as UTC timestamps; the ' +
      'columns are listed in the README). `Content-Length` and `X-Content-SHA256` (hex SHA-256 of the ' +
      "file, as in the task's `dataset`) are set. 409 while the task is not completed yet, 410 once it " +
      'has failed (its dataset could not be compiled: it never will, unless an operator has it ' +
      'compiled again, `POST /api/v1/tasks/{id}/recompile`). 503 when the ' +
      'Parquet file could not be written: for an hour after a failure the answer stands without a new ' +
      'attempt; the JSON lines dataset holds the same rows. 503 with `Retry-After` when the Parquet file ' +
      'is still to be written and the server is busy writing others (a few at a time). With ' +
      '`If-Match` (RFC 9110 §13.1.1), 412 when it names another file, as a client that resumes or ' +
      'revalidates a download by its `ETag` is told once the file changed; `If-Match` is looked at ' +
      'before `If-None-Match`, and after the checks above. `Last-Modified` says when the file was ' +
      'written; `If-Unmodified-Since` (412) and `If-Modified-Since` (304) compare with it, each ' +
      'only without its entity tag counterpart (`If-Match`, `If-None-Match`), in the order of ' +
      'RFC 9110 §13.2.2.',
  })
  @ApiParam(TASK_ID)
  // The 200's media types are declared here only: errors stay JSON (`@ApiProduces` would declare
  // them as files too).
  @ApiOkResponse({
    // Swagger UI offers these types as "Controls Accept header": the server does not read Accept
    // (a Swagger UI audit found a user picking Parquet there and getting JSON lines).
    description:
      'The dataset file, in the format `format` asks for (`Accept` is not read: the media types ' +
      'below say what each format is sent as)',
    content: {
      [DATASET_CONTENT_TYPES.jsonl]: { schema: { type: 'string', format: 'binary' } },
      [DATASET_CONTENT_TYPES.parquet]: { schema: { type: 'string', format: 'binary' } },
    },
    headers: {
      'X-Content-SHA256': {
        ...FILE_VALIDATOR_HEADERS['X-Content-SHA256'],
        description: "Hex SHA-256 of the file sent, as listed in the task's `dataset`",
      },
      ETag: {
        ...FILE_VALIDATOR_HEADERS.ETag,
        description:
          "The file's SHA-256 in quotes: sent back as `If-None-Match`, it is answered 304 without the body " +
          'while the file is unchanged; as `If-Match`, 412 once it has changed',
      },
      'Last-Modified': {
        ...FILE_VALIDATOR_HEADERS['Last-Modified'],
        description:
          'When the file was written (an IMF-fixdate, to the second), as the task records it: the ' +
          'same on every server. Sent back as `If-Modified-Since`, answered 304 while the file was ' +
          'not written since; as `If-Unmodified-Since`, 412 once it was. Absent for a task ' +
          'completed by a release that recorded no time',
      },
      ...FILE_CACHE_HEADERS,
      'Content-Disposition': {
        description:
          '`attachment; filename="<id>.jsonl.gz"` or `"<id>.parquet"`; for an id that is not ASCII, ' +
          "`filename` holds it with `_` for the other characters, followed by `filename*=UTF-8''` and " +
          'the name percent-encoded (RFC 6266, RFC 8187)',
        schema: { type: 'string' },
      },
    },
  })
  @applyDecorators(...DATASET_CONDITION_HEADERS.map((header) => ApiHeader(header)))
  @ApiResponse({
    status: 304,
    description:
      'If-None-Match names the current file, or (without If-None-Match) the file was not written ' +
      'after If-Modified-Since: the copy the client holds is this file. No body',
    headers: { ...FILE_VALIDATOR_HEADERS, ...FILE_CACHE_HEADERS },
  })
  @ApiErrorResponses(
    TASK_NOT_FOUND,
    errorCase(
      409,
      'notCompleted',
      'The task has not completed yet',
      notCompleted('tao-x', 'active'),
    ),
    errorCase(
      410,
      'taskFailed',
      'The task failed: it has no dataset and never will unless an operator recompiles it (the detail says why)',
      taskFailed('tao-x', "ENOSPC: no space left on device, write 'tao-x.jsonl.gz.0b5c.partial'"),
    ),
    errorCase(
      412,
      'otherFile',
      'If-Match names another file than the current one (ETag names the current one)',
      preconditionFailed('tao-x'),
      { headers: FILE_VALIDATOR_HEADERS },
    ),
    errorCase(
      412,
      'writtenSince',
      'Without If-Match: the file was written after If-Unmodified-Since (Last-Modified says ' +
        'when)',
      modifiedSince('tao-x'),
      { headers: FILE_VALIDATOR_HEADERS },
    ),
    validationCase('unknownFormat', 'A format other than jsonl or parquet', {
      loc: ['query', 'format'],
      ...enumError(DATASET_FORMATS),
    }),
    validationCase(
      'conditionTooLong',
      'A conditional header longer than its maxLength (1024 characters for the entity tags, ' +
        '33 for the dates)',
      {
        loc: ['header', 'if-none-match'],
        msg: 'String should have at most 1024 characters',
        type: 'string_too_long',
        ctx: { max_length: 1024 },
      },
    ),
    errorCase(503, 'fileMissing', 'The file is not on this server', fileMissing('tao-x')),
    errorCase(
      503,
      'parquetNotWritten',
      'The Parquet file could not be written (tried again an hour after a failure)',
      parquetUnavailable('tao-x'),
    ),
    errorCase(
      503,
      'parquetBusy',
      'The Parquet file is still to be written and the server is busy writing others ' +
        '(Retry-After says when to come back)',
      parquetBusy('tao-x'),
      { retryAfter: PARQUET_BUSY_RETRY_AFTER_SECONDS },
    ),
  )
  async download(
    @Param('id') id: string,
    @Query() query: DatasetQueryDto,
    @RequestHeaders() conditions: DatasetConditionsDto,
    @Req() request: Request,
    @Res({ passthrough: true }) response: Response,
  ): Promise<StreamableFile | undefined> {
    const format = query.format ?? 'jsonl';
    const answer = await this.downloads.open(
      id,
      format,
      {
        ifMatch: conditions['if-match'],
        ifNoneMatch: conditions['if-none-match'],
        ifModifiedSince: conditions['if-modified-since'],
        ifUnmodifiedSince: conditions['if-unmodified-since'],
      },
      request.method === 'HEAD',
      // Which key downloaded which dataset, on the request's line: the URL's task id is
      // `[redacted]` there from 15 characters (README, "Personal data": who received the rows).
      () => addToRequestLine(request, { task_id: id, format }),
    );
    response.setHeader('X-Content-SHA256', answer.sha256);
    response.setHeader('ETag', entityTag(answer.sha256));
    if (answer.lastModified)
      response.setHeader('Last-Modified', formatHttpDate(answer.lastModified));
    // After the validators: a 412 names the current file, which the client does not hold.
    if (answer.status === 412) throw answer.refusal;
    // Behind a key, and revalidated each time: a Parquet file may be written again (decisions).
    response.setHeader('Cache-Control', 'private, no-cache');
    // Said, not left for a client to find out: a resuming client (curl -C -, wget -c) asks for
    // the rest and gets the whole file (docs/decisions.md, "Scraping task lifecycle").
    response.setHeader('Accept-Ranges', 'none');
    if (answer.status === 304) {
      response.status(304);
      return undefined;
    }
    this.downloads.closeWhenStalled(answer.file, response, id, format);
    return answer.file;
  }
}

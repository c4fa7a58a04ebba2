import { Controller, Get, HttpStatus } from '@nestjs/common';
import {
  ApiExtraModels,
  ApiOkResponse,
  ApiOperation,
  ApiResponse,
  ApiTags,
  getSchemaPath,
} from '@nestjs/swagger';
import type { ResponseObject } from '@nestjs/swagger';
import { RequireKey, RequireMasterKey } from '../../common/access/access.decorators';
import { ERROR_CASES } from '../../common/errors/error-cases';
import { ErrorDetailDto } from '../../common/errors/error.dto';
import { errorResponse } from '../../common/errors/error-responses';
import { ReportException } from '../../common/errors/report-exception';
import { HealthResponseDto } from './dto/health-response.dto';
import { SystemStatusDto } from './dto/system-status.dto';
import { HealthService } from './health.service';

/**
 * Health's 503 is its own report with `status: "unhealthy"`, or, when the key itself cannot be
 * looked up, the database error every operation can answer.
 */
const DATABASE_RESPONSE = errorResponse(503, [ERROR_CASES.databaseUnavailable]);
const DATABASE_ERROR = DATABASE_RESPONSE.content!['application/json'];
const UNHEALTHY_RESPONSE: ResponseObject = {
  description: 'The database does not answer',
  // Retry-After, sent with the database error only: the unhealthy report is for balancers.
  headers: DATABASE_RESPONSE.headers,
  content: {
    'application/json': {
      schema: {
        oneOf: [
          { $ref: getSchemaPath(HealthResponseDto) },
          { $ref: getSchemaPath(ErrorDetailDto) },
        ],
      },
      examples: {
        unhealthy: {
          summary: 'The database does not answer the health check',
          value: {
            status: 'unhealthy',
            timestamp: '2026-11-21T12:00:00.000Z',
            miners_available: 8,
            version: '1.0.0',
            netuid: 13,
            hotkey: '5F4tQyWrhfGVcNhoqeiNsR6KjD4wMZ2kfhLj4oHYuyHbZAc3',
            network: 'subtensor',
            reason: 'database: no answer within 1000 ms',
          },
        },
        ...DATABASE_ERROR.examples,
      },
    },
  },
};

/** An unhealthy report is answered 503, with the report as the body. */
function answerHealth(health: HealthResponseDto): HealthResponseDto {
  if (health.status !== 'healthy')
    throw new ReportException(health, HttpStatus.SERVICE_UNAVAILABLE);
  return health;
}

@ApiTags('Health')
@ApiExtraModels(HealthResponseDto, ErrorDetailDto)
@Controller('api/v1')
export class HealthController {
  constructor(private readonly health: HealthService) {}

  @Get('health')
  @RequireKey()
  @ApiOperation({
    operationId: 'getHealth',
    summary: 'Service health',
    description: 'Checks are cached for up to one second.',
  })
  @ApiOkResponse({ type: HealthResponseDto, description: 'The service is healthy' })
  @ApiResponse({ status: 503, ...UNHEALTHY_RESPONSE })
  getHealth(): HealthResponseDto | Promise<HealthResponseDto> {
    const health = this.health.health();
    return health instanceof Promise ? health.then(answerHealth) : answerHealth(health);
  }

  @Get('monitoring/system-status')
  @RequireMasterKey()
  @ApiOperation({
    operationId: 'getSystemStatus',
    summary: 'Internal monitoring status (master key)',
    description:
      "Per component state and latency. Answered HTTP 200 whatever the components' states, " +
      '`status: "unhealthy"` included (the database does not answer: ' +
      '`components.database.error` says why): a report, given while the reporter works. ' +
      '`/api/v1/health` is what answers 503 for load balancers.',
  })
  @ApiOkResponse({
    type: SystemStatusDto,
    description:
      'The state of each component, also when some are degraded or unhealthy (the database included)',
  })
  getSystemStatus(): Promise<SystemStatusDto> {
    return this.health.systemStatus();
  }
}

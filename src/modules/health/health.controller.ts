import { Controller, Get, Res } from '@nestjs/common';
import {
  ApiOkResponse,
  ApiOperation,
  ApiServiceUnavailableResponse,
  ApiTags,
  getSchemaPath,
} from '@nestjs/swagger';
import type { Response } from 'express';
import { RequireKey, RequireMasterKey } from '../../common/auth/access.decorators';
import { ErrorDetailDto } from '../../common/errors/error-responses';
import { HealthResponseDto } from './dto/health-response.dto';
import { SystemStatusDto } from './dto/system-status.dto';
import { HealthService } from './health.service';

@ApiTags('Health')
@Controller('api/v1')
export class HealthController {
  constructor(private readonly health: HealthService) {}

  @Get('health')
  // Above @RequireKey: its generic 503 would replace this one.
  @ApiServiceUnavailableResponse({
    description:
      'The database does not answer: the health report (`unhealthy`), or the error body when ' +
      'the key itself could not be looked up',
    content: {
      'application/json': {
        schema: {
          oneOf: [
            { $ref: getSchemaPath(HealthResponseDto) },
            { $ref: getSchemaPath(ErrorDetailDto) },
          ],
        },
      },
    },
  })
  @RequireKey()
  @ApiOperation({
    summary: 'Service health',
    description: 'Checks are cached for up to one second.',
  })
  @ApiOkResponse({ type: HealthResponseDto })
  async getHealth(@Res({ passthrough: true }) response: Response): Promise<HealthResponseDto> {
    const health = await this.health.health();
    if (health.status !== 'healthy') response.status(503);
    return health;
  }

  @Get('monitoring/system-status')
  @RequireMasterKey()
  @ApiOperation({
    summary: 'Internal monitoring status (master key)',
    description: 'Per component state and latency.',
  })
  @ApiOkResponse({ type: SystemStatusDto })
  getSystemStatus(): Promise<SystemStatusDto> {
    return this.health.systemStatus();
  }
}

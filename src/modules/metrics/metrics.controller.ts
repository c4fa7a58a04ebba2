import { Controller, Get, Header } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiProduces, ApiTags } from '@nestjs/swagger';
import { RequireMetricsAccess } from '../../common/access/access.decorators';
import { MetricsService } from '../../common/metrics/metrics.service';

/**
 * Prometheus' text exposition format, version 0.0.4 (what prom-client writes), with its parameters
 * in the order Express sends them (it sorts them when it sets the charset), so that the header is
 * the document's media type to the letter (a Python audit's tool compared the whole string).
 */
const PROMETHEUS_CONTENT_TYPE = 'text/plain; charset=utf-8; version=0.0.4';

@ApiTags('Monitoring')
@Controller()
export class MetricsController {
  constructor(private readonly metrics: MetricsService) {}

  @Get('metrics')
  @RequireMetricsAccess()
  @Header('Content-Type', PROMETHEUS_CONTENT_TYPE)
  @Header('Cache-Control', 'no-store')
  @ApiOperation({
    operationId: 'getMetrics',
    summary: 'Prometheus metrics (master key or METRICS_TOKEN)',
    description:
      'Prometheus text format. Send the master key in `X-API-Key`, or `Authorization: Bearer ' +
      '<METRICS_TOKEN>` when the service has one. Not charged to any rate-limit budget.',
  })
  @ApiProduces(PROMETHEUS_CONTENT_TYPE)
  @ApiOkResponse({
    description: 'Every metric of this instance, in the Prometheus text exposition format',
    headers: {
      'Cache-Control': {
        description: 'Never kept by a cache: each scrape reads the metrics as they are now',
        schema: { type: 'string', enum: ['no-store'] },
      },
    },
    content: {
      [PROMETHEUS_CONTENT_TYPE]: {
        schema: {
          type: 'string',
          example:
            'gateway_http_requests_total{method="GET",route="/api/v1/health",status="200"} 3\n',
        },
      },
    },
  })
  scrape(): Promise<string> {
    return this.metrics.scrape();
  }
}

import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { Network, NETWORK_PROPERTY } from './system-status.dto';

@ApiSchema({ name: 'HealthResponse' })
export class HealthResponseDto {
  @ApiProperty({
    description: '`healthy` when the database answers, else `unhealthy` (HTTP 503)',
    enum: ['healthy', 'unhealthy'],
    example: 'healthy',
  })
  status: 'healthy' | 'unhealthy';

  @ApiProperty({
    description: 'Current UTC time',
    format: 'date-time',
    example: '2026-11-21T12:00:00.000Z',
  })
  timestamp: string;

  @ApiProperty({
    type: 'integer',
    format: 'int32',
    minimum: 0,
    description: 'Miners that are not validators and not currently failing',
    example: 8,
  })
  miners_available: number;

  @ApiProperty({ description: 'API version', default: '1.0.0', example: '1.0.0' })
  version: string;

  @ApiProperty({
    type: 'integer',
    format: 'int32',
    minimum: 0,
    description: 'Network UID of the subnet (NETUID)',
    example: 13,
  })
  netuid: number;

  @ApiProperty({
    description: 'Hotkey of this validator',
    example: '5F4tQyWrhfGVcNhoqeiNsR6KjD4wMZ2kfhLj4oHYuyHbZAc3',
  })
  hotkey: string;

  @ApiProperty({ ...NETWORK_PROPERTY, type: String })
  network: Network | null;

  @ApiPropertyOptional({
    description:
      'Only when `unhealthy`: which check failed and how, as a timeout or an error code, never ' +
      "the error's text (it may name the host or the user): /api/v1/monitoring/system-status " +
      'has the detail',
    example: 'database: no answer within 1000 ms',
    // The component's name, then a timeout or a code (health-reason.ts): bounded by its form.
    pattern: '^database: ',
    maxLength: 120,
  })
  reason?: string;
}

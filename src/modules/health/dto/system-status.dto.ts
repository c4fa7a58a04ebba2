import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';

export type ComponentState = 'healthy' | 'unhealthy' | 'degraded' | 'disabled';

@ApiSchema({ name: 'ComponentStatus' })
export class ComponentStatusDto {
  @ApiProperty({ enum: ['healthy', 'unhealthy', 'degraded', 'disabled'], example: 'healthy' })
  status: ComponentState;

  @ApiPropertyOptional({
    description: 'Round-trip time of the check in milliseconds',
    example: 1.2,
    nullable: true,
    type: Number,
  })
  latency_ms: number | null;

  @ApiPropertyOptional({
    description: 'Why the component is not healthy',
    example: 'connect ECONNREFUSED',
  })
  error?: string;
}

@ApiSchema({ name: 'MinersStatus' })
export class MinersStatusDto extends ComponentStatusDto {
  @ApiProperty({ example: 8 })
  available: number;

  @ApiProperty({ example: 10 })
  total: number;

  @ApiProperty({
    description:
      'Miners whose axon address is outside MINER_ALLOWED_NETWORKS (private, loopback, link-local…): never contacted',
    example: 0,
  })
  address_refused: number;
}

@ApiSchema({ name: 'SystemComponents' })
export class SystemComponentsDto {
  @ApiProperty({ type: ComponentStatusDto })
  database: ComponentStatusDto;

  @ApiProperty({
    type: ComponentStatusDto,
    description:
      '`disabled` when REDIS_URL is not set, `degraded` when it cannot be reached (rate limits and the cache then work per process)',
  })
  redis: ComponentStatusDto;

  @ApiProperty({ type: MinersStatusDto })
  miners: MinersStatusDto;
}

@ApiSchema({ name: 'SystemStatus' })
export class SystemStatusDto {
  @ApiProperty({ enum: ['healthy', 'degraded', 'unhealthy'], example: 'healthy' })
  status: 'healthy' | 'degraded' | 'unhealthy';

  @ApiProperty({ format: 'date-time' })
  timestamp: string;

  @ApiProperty({ description: 'Seconds since this instance started', example: 3600 })
  uptime_seconds: number;

  @ApiProperty({ example: '1.0.0' })
  version: string;

  @ApiProperty({ type: SystemComponentsDto })
  components: SystemComponentsDto;
}

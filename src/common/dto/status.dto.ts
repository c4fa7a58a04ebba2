import { ApiProperty, ApiSchema } from '@nestjs/swagger';

@ApiSchema({ name: 'StatusResponse' })
export class StatusDto {
  @ApiProperty({ example: 'success' })
  status: 'success';
}

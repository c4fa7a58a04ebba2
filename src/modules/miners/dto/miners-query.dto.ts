import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional, Max, Min } from 'class-validator';
import { NEURON_STATES, NeuronState } from '../../../network/neuron-listing';
import { IsInteger } from '../../../common/validation/is-integer';

export class MinersQueryDto {
  @ApiPropertyOptional({ enum: NEURON_STATES, description: 'Only neurons in this state' })
  @IsOptional()
  @IsIn(NEURON_STATES)
  state?: NeuronState;

  @ApiPropertyOptional({
    description: 'Only this uid',
    minimum: 0,
    maximum: 65535,
    type: 'integer',
    format: 'int32',
  })
  @IsOptional()
  @IsInteger()
  @Min(0)
  @Max(65535)
  uid?: number;
}

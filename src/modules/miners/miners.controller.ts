import { Controller, Get, Query } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { RequireMasterKey } from '../../common/access/access.decorators';
import { ApiErrorResponses } from '../../common/errors/error-responses';
import { validationCase } from '../../common/errors/error-cases';
import { MinerListDto } from './dto/miner.dto';
import { MinersQueryDto } from './dto/miners-query.dto';
import { MinersService } from './miners.service';

@ApiTags('Miners')
@RequireMasterKey()
@Controller('api/v1/miners')
export class MinersController {
  constructor(private readonly miners: MinersService) {}

  @Get()
  @ApiOperation({
    operationId: 'listMiners',
    summary: 'List the neurons of the metagraph',
    description:
      'Every registered neuron, sorted by uid, with what the gateway knows of it: state, credibility, and the ' +
      'calls of each synapse it may still receive from this validator hotkey. Deregistered uids are not listed.',
  })
  @ApiOkResponse({ type: MinerListDto, description: 'The registered neurons, by uid' })
  @ApiErrorResponses(
    validationCase('uidTooLarge', 'A uid over 65535', {
      loc: ['query', 'uid'],
      msg: 'Input should be less than or equal to 65535',
      type: 'less_than_equal',
      ctx: { le: 65535 },
    }),
  )
  list(@Query() query: MinersQueryDto): Promise<MinerListDto> {
    return this.miners.list(query);
  }
}

import { Controller, Get } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { RequireValidatorKey } from '../../common/access/access.decorators';
import { PublicationStatusDto } from './dto/publication-status.dto';
import { PublicationService } from './publication.service';

@ApiTags('Scraping tasks')
@Controller('api/v1')
export class PublicationController {
  constructor(private readonly publication: PublicationService) {}

  @Get('desirabilities/publication')
  @RequireValidatorKey()
  @ApiOperation({
    operationId: 'getDesirabilityPublication',
    summary: "Where this validator's vote stands on its way to the network",
    description:
      'A vote reaches the network as the subnet’s validators publish theirs: its jobs file is pushed ' +
      'to the Gravity repository (GRAVITY_REPO_URL) as `validator_preferences/<hotkey>.json`, then the ' +
      'commit’s SHA is committed on chain (SUBTENSOR_URL, NETUID), signed by the validator’s hotkey. ' +
      'This runs in the background after set_desirabilities, retried until it succeeds; a newer vote ' +
      'replaces one not yet published.',
  })
  @ApiOkResponse({ type: PublicationStatusDto, description: 'The newest vote’s publication' })
  get(): Promise<PublicationStatusDto> {
    return this.publication.status();
  }
}

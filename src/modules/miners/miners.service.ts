import { Injectable } from '@nestjs/common';
import { NeuronListing } from '../../network/neuron-listing';
import { NetworkService } from '../../network/network.service';
import { MinerDto, MinerListDto } from './dto/miner.dto';
import { MinersQueryDto } from './dto/miners-query.dto';
import { roundTo } from '../../common/round-to';

/**
 * Credibility is shown to four decimals: it is a running average of doubles, and its last
 * digits are float noise (0.6000000000000001), not information. The stored value is untouched.
 */
const CREDIBILITY_DECIMALS = 4;

@Injectable()
export class MinersService {
  constructor(private readonly network: NetworkService) {}

  async list(query: MinersQueryDto): Promise<MinerListDto> {
    const [neurons, status] = await Promise.all([
      this.network.listNeurons(),
      this.network.metagraphStatus(),
    ]);
    const miners = neurons
      .filter((neuron) => query.state === undefined || neuron.state === query.state)
      .filter((neuron) => query.uid === undefined || neuron.uid === query.uid)
      .map(toDto);
    return {
      block: status.stored?.block ?? null,
      source: status.stored?.source ?? null,
      miners,
    };
  }
}

function toDto(neuron: NeuronListing): MinerDto {
  return {
    uid: neuron.uid,
    hotkey: neuron.hotkey,
    coldkey: neuron.coldkey,
    axon: neuron.axon,
    stake: neuron.stake,
    incentive: neuron.incentive,
    validator_permit: neuron.validatorPermit,
    credibility: roundTo(neuron.credibility, CREDIBILITY_DECIMALS),
    state: neuron.state,
    last_seen_at: neuron.lastSeenAt?.toISOString() ?? null,
    call_budget_left: neuron.callBudgetLeft,
  };
}

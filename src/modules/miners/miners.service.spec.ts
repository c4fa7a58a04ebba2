import { NeuronListing } from '../../network/neuron-listing';
import { NetworkService } from '../../network/network.service';
import { MinersService } from './miners.service';

function neuron(uid: number, credibility: number): NeuronListing {
  return {
    uid,
    hotkey: `hotkey-${uid}`,
    coldkey: `coldkey-${uid}`,
    axon: '127.0.0.1:9000',
    stake: 1,
    incentive: 0.1,
    validatorPermit: false,
    credibility,
    state: 'active',
    lastSeenAt: null,
    callBudgetLeft: {
      GetMinerIndex: 1,
      GetDataEntityBucket: 1,
      GetContentsByBuckets: 8,
      OnDemandRequest: 8,
    },
  };
}

describe(MinersService.name, () => {
  it('shows credibility to four decimals, without the float noise of its running average', async () => {
    const credibilities = [0.6000000000000001, 0.30000000000000004, 0.123456789, 1, 0];
    const network = {
      listNeurons: () => Promise.resolve(credibilities.map((value, uid) => neuron(uid, value))),
      metagraphStatus: () => Promise.resolve({ stored: undefined }),
    } as unknown as NetworkService;

    const list = await new MinersService(network).list({});

    expect(list.miners.map((miner) => miner.credibility)).toEqual([0.6, 0.3, 0.1235, 1, 0]);
  });
});

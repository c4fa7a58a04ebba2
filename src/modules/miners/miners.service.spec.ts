import { NeuronListing } from '../../network/neuron-listing';
import { NetworkService } from '../../network/network.service';
import { MinersQueryDto } from './dto/miners-query.dto';
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

  it('lists only the neurons of the state and uid asked for, and the metagraph they come from', async () => {
    const neurons = [
      neuron(0, 0.5),
      {
        ...neuron(1, 0.5),
        state: 'failing' as const,
        lastSeenAt: new Date('2026-01-01T00:00:00Z'),
      },
      neuron(2, 0.5),
    ];
    const network = {
      listNeurons: () => Promise.resolve(neurons),
      metagraphStatus: () => Promise.resolve({ stored: { block: 104, source: 'file /m.json' } }),
    } as unknown as NetworkService;
    const service = new MinersService(network);
    const uids = async (query: MinersQueryDto) =>
      (await service.list(query)).miners.map((miner) => miner.uid);

    expect(await uids({})).toEqual([0, 1, 2]);
    expect(await uids({ state: 'active' })).toEqual([0, 2]);
    expect(await uids({ uid: 2 })).toEqual([2]);
    expect(await uids({ state: 'failing', uid: 2 })).toEqual([]);
    const list = await service.list({ uid: 1 });
    expect(list).toMatchObject({ block: 104, source: 'file /m.json' });
    expect(list.miners[0]).toMatchObject({
      state: 'failing',
      last_seen_at: '2026-01-01T00:00:00.000Z',
    });
  });

  it('answers no block and no source before a metagraph was applied', async () => {
    const network = {
      listNeurons: () => Promise.resolve([]),
      metagraphStatus: () => Promise.resolve({ stored: undefined }),
    } as unknown as NetworkService;

    expect(await new MinersService(network).list({})).toEqual({
      block: null,
      source: null,
      miners: [],
    });
  });
});

import type { ApiPromise } from '@polkadot/api';
import { useConnectedChainReplay } from '../../../test/support/connected-chain-replay';
import { ChainMetagraphReader, readMechagraph, readNeuronsLite } from './chain-metagraph';
import { SubtensorConnection } from './subtensor-connection';

/** The recording answers get_selective_mechagraph only for every one of its 74 fields. */
const ALL_FIELDS = Array.from({ length: 74 }, (_, index) => index);

async function readOnce<T>(url: string, read: (api: ApiPromise) => Promise<T>): Promise<T> {
  const connection = new SubtensorConnection(url, 10_000);
  try {
    return await connection.use(read);
  } finally {
    await connection.close();
  }
}

describe('ChainMetagraphReader against the recorded finney node', () => {
  const chain = useConnectedChainReplay();

  it('reads netuid 1: 1,024 neurons, 827 serving an axon, 12 validator permits', async () => {
    const reader = new ChainMetagraphReader();
    const metagraph = await chain.connection.use((api) => reader.read(api, 1));
    expect(metagraph.block).toBe(6_852_690);
    expect(metagraph.neurons).toHaveLength(1024);
    expect(metagraph.neurons[0]).toMatchObject({
      uid: 0,
      hotkey: '5DkMmXtWf16RNdusZGCrJ7ca7ADPgRnZLVWCWbgA7s7sy1AQ',
      coldkey: '5EhQWxcFdYAk7B9tNdQnJQFzww5N3964rbsMk55SujcX3PwM',
      axon_url: 'http://192.222.59.109:6028',
      stake: 2.557172316,
      validator_permit: false,
    });
    expect(metagraph.neurons.filter((neuron) => neuron.axon_url !== null)).toHaveLength(827);
    expect(metagraph.neurons.filter((neuron) => neuron.validator_permit)).toHaveLength(12);
    const incentives = metagraph.neurons.reduce((sum, neuron) => sum + neuron.incentive, 0);
    expect(incentives).toBeGreaterThan(0.99);
    expect(incentives).toBeLessThan(1.01);
  });

  it('falls back to get_neurons_lite when the node refuses the selective call, once per runtime', async () => {
    const reader = new ChainMetagraphReader();
    chain.replay.runtimeCalls.length = 0;
    // Fresh connections: one client shares an answer at the same block among calls.
    await readOnce(chain.replay.url, (api) => reader.read(api, 1));
    await readOnce(chain.replay.url, (api) => reader.read(api, 1));
    expect(reader.lastMethod).toBe('get_neurons_lite');
    expect(chain.replay.runtimeCalls).toEqual([
      'SubnetInfoRuntimeApi_get_selective_mechagraph',
      'NeuronInfoRuntimeApi_get_neurons_lite',
      'NeuronInfoRuntimeApi_get_neurons_lite',
    ]);
  });

  it('decodes the mechagraph to the same neurons as get_neurons_lite', async () => {
    const { lite, graph } = await chain.connection.use(async (api) => {
      const at = await api.at((await api.rpc.chain.getHeader()).hash);
      return {
        lite: await readNeuronsLite(at, 1),
        graph: await readMechagraph(at, 1, ALL_FIELDS.slice(), 0),
      };
    });
    expect(graph.block).toBe(6_852_690);
    const essentials = (neurons: typeof lite) =>
      neurons.map(({ uid, hotkey, coldkey, axon_url, validator_permit, incentive }) => ({
        uid,
        hotkey,
        coldkey,
        axon_url,
        validator_permit,
        incentive,
      }));
    expect(essentials(graph.neurons)).toEqual(essentials(lite));
  });

  it('refuses an answer that decodes to nothing', async () => {
    chain.replay.mode = 'garbage';
    try {
      await expect(
        readOnce(chain.replay.url, (api) => new ChainMetagraphReader().read(api, 1)),
      ).rejects.toThrow();
    } finally {
      chain.replay.mode = 'answer';
    }
  });
});

import type { ApiPromise } from '@polkadot/api';
import {
  CHAIN_TEST_TIMEOUT_MS,
  CHAIN_USE_TIMEOUT_MS,
  useConnectedChainReplay,
} from '../../../test/support/connected-chain-replay';
import { ChainMetagraphReader, readMechagraph } from './chain-metagraph';
import { SubtensorConnection } from './subtensor-connection';

/** The recording answers get_selective_mechagraph only for every one of its 74 fields. */
const ALL_FIELDS = Array.from({ length: 74 }, (_, index) => index);

async function readOnce<T>(url: string, read: (api: ApiPromise) => Promise<T>): Promise<T> {
  const connection = new SubtensorConnection(url, CHAIN_USE_TIMEOUT_MS);
  try {
    return await connection.use(read);
  } finally {
    await connection.close();
  }
}

describe('ChainMetagraphReader against the recorded finney node', () => {
  const chain = useConnectedChainReplay();

  it(
    'reads netuid 1: 1,024 neurons, 827 serving an axon, 12 validator permits',
    async () => {
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
    },
    CHAIN_TEST_TIMEOUT_MS,
  );

  it(
    'falls back to get_neurons_lite with get_subnet_state when the node refuses the selective call, once per runtime',
    async () => {
      const refusals: string[] = [];
      const reader = new ChainMetagraphReader((call, error) =>
        refusals.push(`${call}: ${error.message}`),
      );
      chain.replay.runtimeCalls.length = 0;
      // The client's own line for the refusal (`RPC-CORE: call(…)`, plain text) is not printed.
      const consoleError = jest.spyOn(console, 'error').mockImplementation(() => undefined);
      try {
        // Fresh connections: one client shares an answer at the same block among calls.
        await readOnce(chain.replay.url, (api) => reader.read(api, 1));
        await readOnce(chain.replay.url, (api) => reader.read(api, 1));
        expect(consoleError).not.toHaveBeenCalled();
      } finally {
        consoleError.mockRestore();
      }
      expect(refusals).toEqual([
        'SubnetInfoRuntimeApi_get_selective_mechagraph: ' +
          '1002: Execution failed: SubnetInfoRuntimeApi_get_selective_mechagraph not recorded',
      ]);
      expect(reader.lastMethod).toBe('get_neurons_lite+get_subnet_state');
      expect(chain.replay.runtimeCalls).toEqual([
        'SubnetInfoRuntimeApi_get_selective_mechagraph',
        'NeuronInfoRuntimeApi_get_neurons_lite',
        'SubnetInfoRuntimeApi_get_subnet_state',
        'NeuronInfoRuntimeApi_get_neurons_lite',
        'SubnetInfoRuntimeApi_get_subnet_state',
      ]);
    },
    CHAIN_TEST_TIMEOUT_MS,
  );

  it(
    'decodes the mechagraph to the same neurons as the fallback, total stakes included',
    async () => {
      const { graph, fallback } = await chain.connection.use(async (api) => {
        const at = await api.at((await api.rpc.chain.getHeader()).hash);
        return {
          graph: await readMechagraph(at, 1, ALL_FIELDS.slice(), 0),
          fallback: await new ChainMetagraphReader().read(api, 1),
        };
      });
      expect(graph.block).toBe(6_852_690);
      expect(fallback.neurons).toEqual(graph.neurons);
      // get_neurons_lite's own `stake` lists the owner's alpha only: 960 and 297 TAO here.
      expect(graph.neurons[24].stake).toBeCloseTo(58_036.81, 2);
      expect(graph.neurons[447].stake).toBeCloseTo(68_340.01, 2);
    },
    CHAIN_TEST_TIMEOUT_MS,
  );

  it(
    'leaves stakes unknown when the node refuses get_subnet_state too, once per runtime',
    async () => {
      const reader = new ChainMetagraphReader();
      chain.replay.runtimeCalls.length = 0;
      chain.replay.refusedCalls.add('SubnetInfoRuntimeApi_get_subnet_state');
      try {
        await readOnce(chain.replay.url, (api) => reader.read(api, 1));
        const metagraph = await readOnce(chain.replay.url, (api) => reader.read(api, 1));
        expect(reader.lastMethod).toBe('get_neurons_lite');
        expect(metagraph.neurons).toHaveLength(1024);
        expect(metagraph.neurons.filter((neuron) => neuron.stake !== null)).toEqual([]);
        expect(metagraph.neurons.filter((neuron) => neuron.validator_permit)).toHaveLength(12);
        expect(chain.replay.runtimeCalls).toEqual([
          'SubnetInfoRuntimeApi_get_selective_mechagraph',
          'NeuronInfoRuntimeApi_get_neurons_lite',
          'SubnetInfoRuntimeApi_get_subnet_state',
          'NeuronInfoRuntimeApi_get_neurons_lite',
        ]);
      } finally {
        chain.replay.refusedCalls.clear();
      }
    },
    CHAIN_TEST_TIMEOUT_MS,
  );

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

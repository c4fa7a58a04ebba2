import type { ApiPromise } from '@polkadot/api';
import type { Codec, Registry } from '@polkadot/types/types';
import {
  CHAIN_TEST_TIMEOUT_MS,
  CHAIN_USE_TIMEOUT_MS,
  QUIET_CONNECTION_LOGGER,
  useConnectedChainReplay,
} from '../../../test/support/connected-chain-replay';
import {
  ChainMetagraphReader,
  MECHAGRAPH_FIELDS,
  readMechagraph,
  selectiveIndexes,
} from './chain-metagraph';
import { SubtensorConnection } from './subtensor-connection';

/** The recording answers get_selective_mechagraph only for every one of its 74 fields. */
const ALL_FIELDS = Array.from({ length: 74 }, (_, index) => index);

async function readOnce<T>(url: string, read: (api: ApiPromise) => Promise<T>): Promise<T> {
  const connection = new SubtensorConnection(url, CHAIN_USE_TIMEOUT_MS, QUIET_CONNECTION_LOGGER);
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

  // Subtensor releases whose SelectiveMetagraphIndex lacks Netuid (the struct has it first) fill
  // field i + 1 for index i: asked for the recorded struct's positions, such a runtime answers
  // without hotkeys. Every read failed and was retried, and the metagraph never loaded.
  it(
    'falls back once per runtime when the selective answer lacks a field asked for',
    async () => {
      const shifted = await chain.connection.use(async (api) => {
        const indexes = selectiveIndexes(api);
        if (!indexes) throw new Error('the recorded runtime has no selective mechagraph');
        const full = (await api.call.subnetInfoRuntimeApi.getSelectiveMechagraph(
          1,
          0,
          ALL_FIELDS,
        )) as unknown as { unwrap(): Map<string, Codec> & Codec };
        const graph = full.unwrap();
        const fields = Object.fromEntries(
          [...graph.entries()].map(([field, value], position) => [
            field,
            position === 0 || indexes.includes(position - 1) ? value : null,
          ]),
        );
        const Graph = graph.constructor as new (registry: Registry, value: unknown) => Codec;
        // Some(graph): Option's tag, then the struct.
        return `0x01${new Graph(api.registry, fields).toHex().slice(2)}`;
      });
      const refusals: string[] = [];
      const reader = new ChainMetagraphReader((call, error) =>
        refusals.push(`${call}: ${error.message}`),
      );
      chain.replay.runtimeCalls.length = 0;
      chain.replay.answeredCalls.set('SubnetInfoRuntimeApi_get_selective_mechagraph', shifted);
      try {
        const metagraph = await readOnce(chain.replay.url, (api) => reader.read(api, 1));
        await readOnce(chain.replay.url, (api) => reader.read(api, 1));
        expect(metagraph.neurons).toHaveLength(1024);
        expect(metagraph.neurons.filter((neuron) => neuron.validator_permit)).toHaveLength(12);
      } finally {
        chain.replay.answeredCalls.clear();
      }
      expect(refusals).toEqual([
        expect.stringMatching(
          /^SubnetInfoRuntimeApi_get_selective_mechagraph: .*without hotkeys, axons, validatorPermit, incentives, totalStake/,
        ),
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

/** A codec's face: what the reader asks of the values the client decodes. */
const codec = (value: unknown) => ({
  toString: () => String(value),
  toNumber: () => Number(value),
  toJSON: () => value,
  isTrue: value === true,
});
const some = <T>(value: T) => ({
  isNone: false,
  isSome: true,
  unwrap: () => value,
});
/** 127.0.0.1 as the chain stores it. */
const LOOPBACK = 0x7f000001;

interface StandInNeuron {
  hotkey: string;
  incentive?: number;
  permit?: boolean;
}

/**
 * A client without the selective call (its metadata lists no runtime APIs): the reader takes
 * get_neurons_lite and get_subnet_state, which answer as the test says.
 */
function standInApi(
  neurons: StandInNeuron[],
  subnetState: () => Promise<{ hotkeys: string[]; stakesRao: number[] }>,
) {
  const calls: string[] = [];
  const api = {
    rpc: { chain: { getHeader: () => Promise.resolve({ number: codec(7) }) } },
    runtimeVersion: { specVersion: codec(300) },
    registry: { metadata: { apis: [] } },
    call: {
      neuronInfoRuntimeApi: {
        getNeuronsLite: () => {
          calls.push('get_neurons_lite');
          return Promise.resolve(
            neurons.map((neuron, uid) => ({
              uid: codec(uid),
              hotkey: codec(neuron.hotkey),
              coldkey: codec(`coldkey-${uid}`),
              axonInfo: {
                ip: codec(LOOPBACK),
                ipType: codec(4),
                port: codec(8091 + uid),
              },
              incentive: codec(neuron.incentive ?? 0),
              validatorPermit: codec(neuron.permit ?? false),
            })),
          );
        },
      },
      subnetInfoRuntimeApi: {
        getSubnetState: async () => {
          calls.push('get_subnet_state');
          const { hotkeys, stakesRao } = await subnetState();
          return some({
            hotkeys: hotkeys.map(codec),
            totalStake: stakesRao.map(codec),
          });
        },
      },
    },
  } as unknown as ApiPromise;
  return { api, calls };
}

describe('ChainMetagraphReader against a stand-in client', () => {
  const TWO = [{ hotkey: 'hotkey-0' }, { hotkey: 'hotkey-1' }];

  it('gives each neuron its total stake in TAO and its incentive as a fraction of u16', async () => {
    const { api } = standInApi(
      [{ hotkey: 'hotkey-0', incentive: 65_535, permit: true }, { hotkey: 'hotkey-1' }],
      () =>
        Promise.resolve({
          hotkeys: ['hotkey-0', 'hotkey-1'],
          stakesRao: [12_500e9, 3e9],
        }),
    );
    const metagraph = await new ChainMetagraphReader().read(api, 13);
    expect(metagraph.neurons).toEqual([
      {
        uid: 0,
        hotkey: 'hotkey-0',
        coldkey: 'coldkey-0',
        axon_url: 'http://127.0.0.1:8091',
        stake: 12_500,
        incentive: 1,
        validator_permit: true,
      },
      expect.objectContaining({
        uid: 1,
        stake: 3,
        incentive: 0,
        validator_permit: false,
      }),
    ]);
  });

  // The two calls are made one after the other: a uid that changed hands between them would
  // give one neuron another's stake (and perhaps a validator's weight).
  it('refuses the read when get_subnet_state names another hotkey for a uid', async () => {
    const { api } = standInApi(TWO, () =>
      Promise.resolve({
        hotkeys: ['hotkey-0', 'hotkey-1-new-owner'],
        stakesRao: [1e9, 2e9],
      }),
    );
    await expect(new ChainMetagraphReader().read(api, 13)).rejects.toThrow(
      /disagree on the hotkeys \(uid 1\)/,
    );
  });

  it('refuses the read when get_subnet_state lists more neurons than get_neurons_lite', async () => {
    const { api } = standInApi(TWO, () =>
      Promise.resolve({
        hotkeys: ['hotkey-0', 'hotkey-1', 'hotkey-2'],
        stakesRao: [1e9, 2e9, 3e9],
      }),
    );
    await expect(new ChainMetagraphReader().read(api, 13)).rejects.toThrow(/disagree/);
  });

  // Only the runtime's refusal (`Execution failed: …`) is one to remember. A connection that
  // drops under the call, or a node too busy to run it, is not: remembering it would leave every
  // stake unknown until the runtime changed, and permit holders under the minimum stake counted
  // as validators.
  it.each([
    ['was cut off', 'disconnected from ws://127.0.0.1:9944: 1006:: Abnormal Closure'],
    ['met a busy node', '-32009: Server is busy, try again later'],
    ['met a rate limit', '-32029: Too many requests'],
  ])(
    'fails a read whose get_subnet_state %s, and asks for it again on the next',
    async (_, message) => {
      let answers = 0;
      const refusals: string[] = [];
      const { api, calls } = standInApi(TWO, () => {
        answers += 1;
        return answers === 1
          ? Promise.reject(new Error(message))
          : Promise.resolve({
              hotkeys: ['hotkey-0', 'hotkey-1'],
              stakesRao: [1e9, 2e9],
            });
      });
      const reader = new ChainMetagraphReader((call) => refusals.push(call));
      await expect(reader.read(api, 13)).rejects.toThrow(message);
      const metagraph = await reader.read(api, 13);
      expect(metagraph.neurons.map((neuron) => neuron.stake)).toEqual([1, 2]);
      expect(reader.lastMethod).toBe('get_neurons_lite+get_subnet_state');
      expect(refusals).toEqual([]);
      expect(calls).toEqual([
        'get_neurons_lite',
        'get_subnet_state',
        'get_neurons_lite',
        'get_subnet_state',
      ]);
    },
  );

  // What a substrate node answers for a runtime API its runtime lacks.
  it('remembers a runtime without get_subnet_state, and leaves stakes unknown', async () => {
    const refusals: string[] = [];
    const { api, calls } = standInApi(TWO, () =>
      Promise.reject(
        new Error(
          '4003: Client error: Execution failed: Other: Exported method ' +
            'SubnetInfoRuntimeApi_get_subnet_state is not found',
        ),
      ),
    );
    const reader = new ChainMetagraphReader((call) => refusals.push(call));
    await reader.read(api, 13);
    const metagraph = await reader.read(api, 13);
    expect(metagraph.neurons.map((neuron) => neuron.stake)).toEqual([null, null]);
    expect(refusals).toEqual(['SubnetInfoRuntimeApi_get_subnet_state']);
    expect(calls).toEqual(['get_neurons_lite', 'get_subnet_state', 'get_neurons_lite']);
  });
});

describe(readMechagraph.name, () => {
  const mechagraph = (fields: Record<string, unknown[]>, block?: number) =>
    ({
      call: {
        subnetInfoRuntimeApi: {
          getSelectiveMechagraph: () =>
            Promise.resolve(
              some({
                ...Object.fromEntries(
                  Object.entries(fields).map(([field, values]) => [
                    field,
                    // Axons are structs: their fields are the codecs.
                    some(values.map((value) => (typeof value === 'object' ? value : codec(value)))),
                  ]),
                ),
                block: block === undefined ? { isNone: true, isSome: false } : some(codec(block)),
              }),
            ),
        },
      },
    }) as unknown as Parameters<typeof readMechagraph>[0];
  const axon = { ip: codec(LOOPBACK), ipType: codec(4), port: codec(8091) };
  const fields = (count: number, stakes = count) => ({
    hotkeys: Array.from({ length: count }, (_, uid) => `hotkey-${uid}`),
    coldkeys: Array.from({ length: count }, (_, uid) => `coldkey-${uid}`),
    axons: Array.from({ length: count }, () => axon),
    validatorPermit: Array.from({ length: count }, () => false),
    incentives: Array.from({ length: count }, () => 0),
    totalStake: Array.from({ length: stakes }, () => 1e9),
  });

  it('reads the block the mechagraph names, or the one given without it', async () => {
    expect((await readMechagraph(mechagraph(fields(2), 42), 13, [], 7)).block).toBe(42);
    expect((await readMechagraph(mechagraph(fields(2)), 13, [], 7)).block).toBe(7);
  });

  // Lists of different lengths would pair a hotkey with another neuron's stake or axon.
  it('refuses an answer whose lists are not all as long as its hotkeys', async () => {
    await expect(readMechagraph(mechagraph(fields(3, 2), 42), 13, [], 7)).rejects.toThrow(
      /different numbers/,
    );
  });
});

describe(selectiveIndexes.name, () => {
  /** A runtime whose SelectiveMetagraph has these fields, in this order. */
  const runtimeWith = (fields: readonly string[]) =>
    ({
      registry: {
        metadata: {
          apis: [
            {
              name: { eq: (name: string) => name === 'SubnetInfoRuntimeApi' },
              methods: [
                {
                  name: {
                    eq: (name: string) => name === 'get_selective_mechagraph',
                  },
                  output: 1,
                },
              ],
            },
          ],
        },
        lookup: {
          getTypeDef: () => ({ sub: { lookupName: 'SelectiveMetagraph' } }),
        },
        createType: () => new Map(fields.map((field) => [field, undefined])),
      },
    }) as unknown as Parameters<typeof selectiveIndexes>[0];

  it("finds where each field the reader needs is in the runtime's mechagraph", () => {
    const fields = ['netuid', ...[...MECHAGRAPH_FIELDS].reverse()];
    expect(selectiveIndexes(runtimeWith(fields))).toEqual(
      MECHAGRAPH_FIELDS.map((field) => fields.indexOf(field)),
    );
  });

  // Asked for a field it does not have, the node would answer without it, and every read would
  // fail: get_neurons_lite must be read instead.
  it("gives nothing when the runtime's mechagraph lacks one of the fields", () => {
    const fields = MECHAGRAPH_FIELDS.filter((field) => field !== 'totalStake');
    expect(selectiveIndexes(runtimeWith(['netuid', ...fields]))).toBeUndefined();
  });
});

import type { ApiPromise } from '@polkadot/api';
import type { ApiDecoration } from '@polkadot/api/types';
import type { Codec } from '@polkadot/types/types';
import { MetagraphFile, MetagraphNeuron } from '../protocol';
import { axonUrl, ChainAxon } from './axon-address';

/** 1 TAO = 10^9 rao. */
const RAO_PER_TAO = 1e9;
/** Incentives are u16 fractions of 65,535. */
const U16_MAX = 65_535;

/** The fields of the mechagraph we read, by their names in the runtime's metadata. */
export const MECHAGRAPH_FIELDS = [
  'block',
  'hotkeys',
  'coldkeys',
  'axons',
  'validatorPermit',
  'incentives',
  'totalStake',
] as const;

/** The fields each neuron is made of: an answer without one of them cannot be read. */
const NEURON_FIELDS = MECHAGRAPH_FIELDS.filter((field) => field !== 'block');

/** The client, or its view at one block: what the reads below need of either. */
type Decoded = Pick<ApiDecoration<'promise'>, 'call' | 'registry'>;

/** How a read was made: the mechagraph, or get_neurons_lite with or without total stakes. */
export type MetagraphMethod =
  'get_selective_mechagraph' | 'get_neurons_lite+get_subnet_state' | 'get_neurons_lite';

/**
 * Reads a subnet's metagraph through the runtime API at the node's best block:
 * `get_selective_mechagraph` for the fields above (one small answer), or on a runtime without
 * it (or that fails running it) `get_neurons_lite` with the total stakes of `get_subnet_state`,
 * as the SDK's own metagraph does. get_neurons_lite's `stake` lists only the owner's own stake,
 * not the total the subnet weighs: a runtime that cannot run get_subnet_state either leaves
 * stakes unknown (null) rather than wrong. A selective answer without a neuron field asked for
 * counts as a refusal (UnansweredFieldsError). Those refusals are remembered per runtime version,
 * so a runtime that cannot answer a call is not asked it twice; any other error (a busy node,
 * a rate limit, a dropped connection) fails the read, which is retried.
 */
export class ChainMetagraphReader {
  private readonly refusedSelective = new Set<number>();
  private readonly refusedSubnetState = new Set<number>();

  /** How the last read was made (for logs and tests). */
  lastMethod: MetagraphMethod | undefined;

  /** `onRefusal` hears of each refusal remembered: the runtime call and the node's error. */
  constructor(private readonly onRefusal: (call: string, error: Error) => void = () => undefined) {}

  /**
   * Reads at the node's best block (not at a fixed block hash: the client would share such an
   * answer between reads for a while). The mechagraph names its block; get_neurons_lite does
   * not, so the block of the header read just before stands for it.
   */
  async read(api: ApiPromise, netuid: number): Promise<MetagraphFile> {
    const header = await api.rpc.chain.getHeader();
    const at = api as unknown as Decoded;
    const spec = api.runtimeVersion.specVersion.toNumber();
    let neurons: MetagraphNeuron[] | undefined;
    let block = header.number.toNumber();
    const indexes = this.refusedSelective.has(spec) ? undefined : selectiveIndexes(at);
    if (indexes) {
      const graph = await unlessRefused(readMechagraph(at, netuid, indexes, block), (error) => {
        this.refusedSelective.add(spec);
        this.onRefusal('SubnetInfoRuntimeApi_get_selective_mechagraph', error);
      });
      if (graph) {
        ({ neurons, block } = graph);
        this.lastMethod = 'get_selective_mechagraph';
      }
    }
    neurons ??= await this.readFallback(at, netuid, spec);
    return { netuid, block, updated_at: new Date().toISOString(), neurons };
  }

  /** get_neurons_lite, with get_subnet_state's total stakes unless the node refuses it. */
  private async readFallback(
    at: Decoded,
    netuid: number,
    spec: number,
  ): Promise<MetagraphNeuron[]> {
    const neurons = await readNeuronsLite(at, netuid);
    this.lastMethod = 'get_neurons_lite';
    // No neurons, no stakes to read (an empty answer is judged as it is: MetagraphService).
    if (neurons.length === 0 || this.refusedSubnetState.has(spec)) return neurons;
    const stakes = await unlessRefused(readSubnetStakes(at, netuid), (error) => {
      this.refusedSubnetState.add(spec);
      this.onRefusal('SubnetInfoRuntimeApi_get_subnet_state', error);
    });
    if (!stakes) return neurons;
    this.lastMethod = 'get_neurons_lite+get_subnet_state';
    return withTotalStakes(neurons, stakes);
  }
}

/**
 * The runtime ran get_selective_mechagraph and left fields asked for empty: it numbers the fields
 * otherwise than its SelectiveMetagraph type lists them. Subtensor releases whose
 * SelectiveMetagraphIndex lacks Netuid (the struct starts with it) fill field i + 1 for index i,
 * so hotkeys come back None. Every runtime of that version answers the same: a refusal.
 */
export class UnansweredFieldsError extends Error {
  constructor(fields: readonly string[]) {
    super(
      `the runtime answered without ${fields.join(', ')} ` +
        '(its field indexes differ from its SelectiveMetagraph type)',
    );
  }
}

/** The call's answer, or undefined (after `onRefusal`) when the runtime refused it. */
async function unlessRefused<T>(
  call: Promise<T>,
  onRefusal: (error: Error) => void,
): Promise<T | undefined> {
  try {
    return await call;
  } catch (error) {
    if (!isRuntimeRefusal(error) && !(error instanceof UnansweredFieldsError)) throw error;
    onRefusal(error as Error);
    return undefined;
  }
}

/** The positions of MECHAGRAPH_FIELDS in the runtime's SelectiveMetagraph, if it has one. */
export function selectiveIndexes(at: Decoded): number[] | undefined {
  const method = at.registry.metadata.apis
    .find((api) => api.name.eq('SubnetInfoRuntimeApi'))
    ?.methods.find((candidate) => candidate.name.eq('get_selective_mechagraph'));
  if (!method) return undefined;
  const option = at.registry.lookup.getTypeDef(method.output);
  const inner = Array.isArray(option.sub) ? undefined : option.sub?.lookupName;
  if (!inner) return undefined;
  const keys = [...(at.registry.createType(inner) as unknown as Map<string, Codec>).keys()];
  const indexes = MECHAGRAPH_FIELDS.map((field) => keys.indexOf(field));
  return indexes.every((index) => index >= 0) ? indexes : undefined;
}

/** Reads MECHAGRAPH_FIELDS with `get_selective_mechagraph(netuid, 0, indexes)`. */
export async function readMechagraph(
  at: Decoded,
  netuid: number,
  indexes: readonly number[],
  fallbackBlock: number,
): Promise<{ neurons: MetagraphNeuron[]; block: number }> {
  const answer = (await at.call.subnetInfoRuntimeApi.getSelectiveMechagraph(netuid, 0, [
    ...indexes,
  ])) as unknown as OptionOf<Record<string, OptionOf<Codec>>>;
  if (answer.isNone) throw new Error(`subnet ${netuid} does not exist on this chain`);
  const graph = answer.unwrap();
  const unanswered = NEURON_FIELDS.filter((field) => !graph[field] || graph[field].isNone);
  if (unanswered.length > 0) throw new UnansweredFieldsError(unanswered);
  const list = (field: string): Codec[] => [
    ...(graph[field].unwrap() as unknown as Iterable<Codec>),
  ];
  const hotkeys = list('hotkeys');
  const [coldkeys, axons, permits, incentives, stakes] = [
    list('coldkeys'),
    list('axons'),
    list('validatorPermit'),
    list('incentives'),
    list('totalStake'),
  ];
  if (
    [coldkeys, axons, permits, incentives, stakes].some(
      (values) => values.length !== hotkeys.length,
    )
  )
    throw new Error('the answer lists different numbers of hotkeys, coldkeys, axons and stakes');
  const block = graph.block?.isSome ? Number(graph.block.unwrap().toString()) : fallbackBlock;
  const neurons = hotkeys.map((hotkey, uid) => ({
    uid,
    hotkey: hotkey.toString(),
    coldkey: coldkeys[uid].toString(),
    axon_url: axonUrl(chainAxon(axons[uid])),
    stake: Number(stakes[uid].toString()) / RAO_PER_TAO,
    incentive: Number(incentives[uid].toString()) / U16_MAX,
    validator_permit: permits[uid].toJSON() === true,
  }));
  return { neurons, block };
}

/**
 * Reads every neuron with `get_neurons_lite(netuid)`. Stake is left unknown (null): the answer's
 * `stake` lists only the owner's own stake on the subnet (uid 24 of the recording: 960 TAO of
 * its 58,037 total), which would misjudge validators and their votes.
 */
export async function readNeuronsLite(at: Decoded, netuid: number): Promise<MetagraphNeuron[]> {
  const answer = (await at.call.neuronInfoRuntimeApi.getNeuronsLite(
    netuid,
  )) as unknown as NeuronLite[];
  return [...answer].map((neuron) => ({
    uid: neuron.uid.toNumber(),
    hotkey: neuron.hotkey.toString(),
    coldkey: neuron.coldkey.toString(),
    axon_url: axonUrl(chainAxon(neuron.axonInfo)),
    stake: null,
    incentive: neuron.incentive.toNumber() / U16_MAX,
    validator_permit: neuron.validatorPermit.isTrue,
  }));
}

/** Each uid's hotkey and stake weight (α, rao / 10⁹) from `get_subnet_state(netuid)`. */
export async function readSubnetStakes(
  at: Decoded,
  netuid: number,
): Promise<{ hotkeys: string[]; stakes: number[] }> {
  const answer = (await at.call.subnetInfoRuntimeApi.getSubnetState(netuid)) as unknown as OptionOf<
    Record<'hotkeys' | 'totalStake', Iterable<Codec>>
  >;
  if (answer.isNone) throw new Error(`subnet ${netuid} does not exist on this chain`);
  const state = answer.unwrap();
  return {
    hotkeys: [...state.hotkeys].map((hotkey) => hotkey.toString()),
    stakes: [...state.totalStake].map((stake) => Number(stake.toString()) / RAO_PER_TAO),
  };
}

/**
 * The neurons with their total stakes. The two calls are made at the best block one after the
 * other: if a uid changed hands in between, the read is refused (and retried) rather than
 * giving one neuron another's stake.
 */
function withTotalStakes(
  neurons: MetagraphNeuron[],
  { hotkeys, stakes }: { hotkeys: string[]; stakes: number[] },
): MetagraphNeuron[] {
  const mismatch = neurons.find((neuron) => hotkeys[neuron.uid] !== neuron.hotkey);
  if (mismatch || hotkeys.length !== neurons.length || stakes.length !== hotkeys.length)
    throw new Error(
      'get_neurons_lite and get_subnet_state disagree on the hotkeys' +
        (mismatch ? ` (uid ${mismatch.uid})` : '') +
        ': the metagraph changed between them',
    );
  return neurons.map((neuron) => ({ ...neuron, stake: stakes[neuron.uid] }));
}

interface OptionOf<T> {
  isNone: boolean;
  isSome: boolean;
  unwrap(): T;
}

interface NeuronLite {
  uid: { toNumber(): number };
  hotkey: Codec;
  coldkey: Codec;
  axonInfo: Codec;
  incentive: { toNumber(): number };
  validatorPermit: { isTrue: boolean };
}

function chainAxon(axon: Codec): ChainAxon {
  const { ip, ipType, port } = axon as unknown as Record<'ip' | 'ipType' | 'port', Codec>;
  return {
    ip: BigInt(ip.toString()),
    ipType: Number(ipType.toString()),
    port: Number(port.toString()),
  };
}

/**
 * The node ran the call in its runtime, and the runtime could not answer it: a runtime without
 * the call (substrate: `4003: Client error: Execution failed: Other: Exported method … is not
 * found`) or one that panics on it. Any runtime of that version answers the same, so it is
 * remembered. Every other error, the node's own included (`-32009: Server is busy, try again
 * later`, a public node's rate limit), is a failed read, retried: remembered, it would leave
 * every stake unknown until the runtime changed.
 */
function isRuntimeRefusal(error: unknown): boolean {
  return (
    error instanceof Error && /^-?\d+: (Client error: )?Execution failed: /.test(error.message)
  );
}

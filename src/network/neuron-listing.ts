import { isValidator } from '../common/validator-standing';
import { currentState, MinerEntity } from './miner.entity';
import { SynapseName } from '../common/synapse-names';
import { axonOf } from './transport/axon-http';
import { BudgetLeft } from './transport/call-budgets';

/**
 * What a neuron is to the gateway: `validator` (validator permit and VALIDATOR_MIN_STAKE: never
 * asked for data; a permit holder with less stake is a miner), `not_serving` (no axon),
 * `address_refused` (axon outside MINER_ALLOWED_NETWORKS or announced by another coldkey's
 * neuron too, never contacted), `failing` (a circuit of its opened within its cooldown) or
 * `active`.
 */
export const NEURON_STATES = [
  'active',
  'failing',
  'address_refused',
  'not_serving',
  'validator',
] as const;
export type NeuronState = (typeof NEURON_STATES)[number];

/** One registered neuron as the miners listing shows it. */
export interface NeuronListing {
  uid: number;
  hotkey: string;
  coldkey: string;
  /** `host:port` of its axon, or null when it serves none. */
  axon: string | null;
  /** Stake weight on the subnet in alpha (not TAO); null when unknown. */
  stake: number | null;
  incentive: number;
  validatorPermit: boolean;
  credibility: number;
  state: NeuronState;
  lastSeenAt: Date | null;
  /** Calls of each budgeted synapse it may still receive from this hotkey (null: no budget). */
  callBudgetLeft: Record<SynapseName, number | null>;
}

/** `now`: when its state is read (currentState: a `failing` state ends with its cooldown). */
export function neuronState(
  miner: MinerEntity,
  validatorMinStake: number,
  now = Date.now(),
): NeuronState {
  if (isValidator(miner, validatorMinStake)) return 'validator';
  if (miner.axonUrl === null) return 'not_serving';
  const state = currentState(miner, now);
  if (state === 'address_refused' || state === 'failing') return state;
  return 'active';
}

export function neuronListing(
  miner: MinerEntity,
  budgets: ReadonlyMap<SynapseName, ReadonlyMap<string, BudgetLeft>>,
  validatorMinStake: number,
): NeuronListing {
  const callBudgetLeft = {} as Record<SynapseName, number | null>;
  for (const [synapse, left] of budgets) {
    const value = left.get(miner.hotkey)?.left ?? Infinity;
    callBudgetLeft[synapse] = Number.isFinite(value) ? value : null;
  }
  return {
    uid: miner.uid,
    hotkey: miner.hotkey,
    coldkey: miner.coldkey,
    axon: miner.axonUrl === null ? null : axonAddress(miner.hotkey, miner.axonUrl),
    stake: miner.stake,
    incentive: miner.incentive,
    validatorPermit: miner.validatorPermit,
    credibility: miner.credibility,
    state: neuronState(miner, validatorMinStake),
    lastSeenAt: miner.lastSeenAt,
    callBudgetLeft,
  };
}

/**
 * `host:port` of the axon the gateway calls (axonOf), `[v6]:port` for IPv6. Not the URL's own
 * `host`, which leaves out a port that is its scheme's default (`http://1.2.3.4:80` is `1.2.3.4`).
 */
function axonAddress(hotkey: string, axonUrl: string): string {
  const { ip, port } = axonOf({ hotkey, axonUrl });
  return `${ip.includes(':') ? `[${ip}]` : ip}:${port}`;
}

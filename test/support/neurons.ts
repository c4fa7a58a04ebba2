import { MinerEntity } from '../../src/network/miner.entity';
import { MetagraphNeuron } from '../../src/network/protocol';

// One neuron at `uid`, as the metagraph lists it and as the miners table stores it: keys of its
// own, an axon on loopback, a little stake and no validator permit. A test overrides what it is
// about (a validator's permit and stake, a new hotkey, no axon, a state).

export function metagraphNeuron(
  uid: number,
  overrides: Partial<MetagraphNeuron> = {},
): MetagraphNeuron {
  return {
    uid,
    hotkey: `hotkey-${uid}`,
    coldkey: `coldkey-${uid}`,
    axon_url: `http://127.0.0.1:${9000 + uid}`,
    stake: 10,
    incentive: 0.1,
    validator_permit: false,
    ...overrides,
  };
}

/** The miners table's row of a neuron never called yet (credibility 0.5), with `overrides`. */
export function minerEntityOf(
  neuron: MetagraphNeuron,
  overrides: Partial<MinerEntity> = {},
): MinerEntity {
  return {
    uid: neuron.uid,
    hotkey: neuron.hotkey,
    coldkey: neuron.coldkey,
    axonUrl: neuron.axon_url,
    stake: neuron.stake,
    incentive: neuron.incentive,
    validatorPermit: neuron.validator_permit,
    credibility: 0.5,
    state: 'active',
    failingUntil: null,
    lastSeenAt: null,
    updatedAt: new Date(0),
    ...overrides,
  };
}

/** The miners table's row of `metagraphNeuron(uid)`, with `overrides`. */
export function minerEntity(uid: number, overrides: Partial<MinerEntity> = {}): MinerEntity {
  return minerEntityOf(metagraphNeuron(uid), overrides);
}

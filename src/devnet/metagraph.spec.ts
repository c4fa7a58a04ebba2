import { publicKeyOfAddress, Sr25519Keypair } from '../network/bittensor/keypair';
import {
  blockAt,
  buildMetagraph,
  devnetKeyUri,
  EXTRA_VALIDATOR_STAKE,
  generateIdentities,
} from './metagraph';
import { DEFAULT_VALIDATOR_MIN_STAKE } from '../common/validator-standing';

describe('generateIdentities', () => {
  it('is the same for the same seed and differs for another', () => {
    expect(generateIdentities(4, 6, 2)).toEqual(generateIdentities(4, 6, 2));
    expect(generateIdentities(5, 6, 2)[0].hotkey).not.toBe(generateIdentities(4, 6, 2)[0].hotkey);
  });

  it('derives hotkeys and coldkeys from the public devnet uris', () => {
    const identities = generateIdentities(4, 3, 1);
    const addressOf = (uri: string): string => Sr25519Keypair.fromUri(uri).address;
    expect(identities.map((identity) => identity.hotkey)).toEqual([
      addressOf(devnetKeyUri(4, 'miner', 0)),
      addressOf(devnetKeyUri(4, 'miner', 1)),
      addressOf(devnetKeyUri(4, 'miner', 2)),
      addressOf(devnetKeyUri(4, 'validator', 3)),
    ]);
    expect(identities[0].coldkey).toBe(addressOf(devnetKeyUri(4, 'coldkey', 'pair-0')));
    expect(identities[2].coldkey).toBe(addressOf(devnetKeyUri(4, 'coldkey', 'neuron-2')));
    for (const identity of identities) {
      expect(publicKeyOfAddress(identity.hotkey)).toHaveLength(32);
    }
  });

  it('keeps a miner key when miners are added', () => {
    expect(generateIdentities(4, 8, 2)[3].hotkey).toBe(generateIdentities(4, 4, 2)[3].hotkey);
  });

  it('pairs miners 4k and 4k+1 on one coldkey and gives validators the permit', () => {
    const identities = generateIdentities(4, 8, 2);
    const coldkeys = identities.map((identity) => identity.coldkey);
    expect(coldkeys[4]).toBe(coldkeys[5]);
    expect(new Set(coldkeys).size).toBe(6 + 2);
    expect(identities.slice(8).every((identity) => identity.validatorPermit)).toBe(true);
    const incentives = identities.slice(0, 8).map((identity) => identity.incentive);
    expect(incentives.reduce((sum, value) => sum + value, 0)).toBeCloseTo(1, 4);
    expect(new Set(incentives).size).toBe(8);
  });
});

describe('buildMetagraph', () => {
  const identities = generateIdentities(4, 2, 1);
  const urls = new Map([
    [0, 'http://127.0.0.1:9000'],
    [1, 'http://127.0.0.1:9001'],
  ]);

  it('lists outside validators last, with a permit and enough stake for miners to answer', () => {
    const gateway = Sr25519Keypair.fromUri('//Gateway').address;
    const other = Sr25519Keypair.fromUri('//Other').address;
    const metagraph = buildMetagraph(identities, urls, new Date(), [gateway, other]);
    expect(metagraph.neurons.map((neuron) => neuron.uid)).toEqual([0, 1, 2, 3, 4]);
    expect(metagraph.neurons.slice(3)).toEqual([
      expect.objectContaining({ uid: 3, hotkey: gateway, axon_url: null, validator_permit: true }),
      expect.objectContaining({ uid: 4, hotkey: other, axon_url: null, validator_permit: true }),
    ]);
    expect(EXTRA_VALIDATOR_STAKE).toBeGreaterThanOrEqual(DEFAULT_VALIDATOR_MIN_STAKE);
    expect(metagraph.neurons[3].stake).toBe(EXTRA_VALIDATOR_STAKE);
    expect(metagraph.neurons[0].axon_url).toBe('http://127.0.0.1:9000');
  });

  it('does not list a devnet key twice', () => {
    const metagraph = buildMetagraph(identities, urls, new Date(), [identities[2].hotkey]);
    expect(metagraph.neurons).toHaveLength(3);
  });

  // `--validator-hotkeys K,K`, or `--gateway-wallet` whose hotkey is listed there as well.
  it('lists an outside validator given twice once, at the next uid', () => {
    const gateway = Sr25519Keypair.fromUri('//Gateway').address;
    const other = Sr25519Keypair.fromUri('//Other').address;
    const metagraph = buildMetagraph(identities, urls, new Date(), [gateway, other, gateway]);
    expect(metagraph.neurons.map(({ uid, hotkey }) => ({ uid, hotkey })).slice(3)).toEqual([
      { uid: 3, hotkey: gateway },
      { uid: 4, hotkey: other },
    ]);
  });
});

describe('blockAt', () => {
  it('advances one block every 12 seconds', () => {
    const date = new Date('2025-01-01T00:00:00Z');
    expect(blockAt(new Date(date.getTime() + 120_000)) - blockAt(date)).toBe(10);
  });
});

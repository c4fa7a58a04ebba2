import { randomBytes } from 'node:crypto';
import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { Sr25519Keypair } from '../network/bittensor/keypair';
import { MetagraphFile, MetagraphNeuron } from '../network/protocol';
import { createRng, deriveSeed } from './rng';
import { roundTo } from '../common/round-to';

/** Deterministic keys, stakes and incentives for the devnet, and the metagraph file. */

export const DEVNET_NETUID = 13;

/**
 * The secret URI of a devnet key, derived from the Substrate development phrase: public
 * knowledge, like `//Alice`, so tests can sign as a devnet validator and anyone can re-derive
 * the addresses the metagraph lists.
 */
export function devnetKeyUri(
  seed: number,
  role: 'miner' | 'validator' | 'coldkey',
  index: number | string,
): string {
  return `//devnet//${seed}//${role}//${index}`;
}

function addressOf(uri: string): string {
  return Sr25519Keypair.fromUri(uri).address;
}

export interface Identity {
  uid: number;
  hotkey: string;
  coldkey: string;
  stake: number;
  incentive: number;
  validatorPermit: boolean;
}

/**
 * Miners take uids 0..minerCount-1 (so `--faults 2:hang` names the third miner), validators the
 * uids after them. Miners 4k and 4k+1 share a coldkey (one operator, two miners), so coldkey
 * diversity rules have something to act on; the others have their own.
 */
export function generateIdentities(
  seed: number,
  minerCount: number,
  validatorCount: number,
): Identity[] {
  const rng = createRng(deriveSeed(seed, 'identities'));
  const coldkeys = new Map<string, string>();
  const coldkeyFor = (group: string): string => {
    const existing = coldkeys.get(group);
    if (existing) return existing;
    const created = addressOf(devnetKeyUri(seed, 'coldkey', group));
    coldkeys.set(group, created);
    return created;
  };
  const weights = Array.from({ length: minerCount }, () => 0.2 + rng.next());
  const totalWeight = weights.reduce((sum, weight) => sum + weight, 0);
  const identities: Identity[] = [];
  for (let uid = 0; uid < minerCount + validatorCount; uid++) {
    const isMiner = uid < minerCount;
    const group = isMiner && uid % 4 < 2 ? `pair-${Math.floor(uid / 4)}` : `neuron-${uid}`;
    identities.push({
      uid,
      hotkey: addressOf(devnetKeyUri(seed, isMiner ? 'miner' : 'validator', uid)),
      coldkey: coldkeyFor(group),
      stake: isMiner
        ? roundTo(10 + rng.next() * 2990, 4)
        : roundTo(50_000 + rng.next() * 450_000, 4),
      incentive: isMiner ? roundTo(weights[uid] / totalWeight, 6) : 0,
      validatorPermit: !isMiner,
    });
  }
  return identities;
}

/** Stake of a validator from outside the devnet: enough for miners to take its calls. */
export const EXTRA_VALIDATOR_STAKE = 100_000;

/** A block height that advances every 12 s, as the chain's does. */
export function blockAt(date: Date): number {
  const reference = Date.UTC(2024, 9, 1);
  return 4_000_000 + Math.floor((date.getTime() - reference) / 12_000);
}

/**
 * The metagraph of `identities`, plus `extraValidators` (validators outside the devnet, such as
 * the gateway) after them, each with a validator permit and `EXTRA_VALIDATOR_STAKE`.
 */
export function buildMetagraph(
  identities: readonly Identity[],
  axonUrls: ReadonlyMap<number, string>,
  writtenAt: Date,
  extraValidators: readonly string[] = [],
): MetagraphFile {
  // Each hotkey once (`--validator-hotkeys K,K`, or the gateway wallet's hotkey listed too): a
  // hotkey at two uids is a metagraph the gateway never applies (one row per miner hotkey).
  const extra = [...new Set(extraValidators)]
    .filter((hotkey) => !identities.some((identity) => identity.hotkey === hotkey))
    .map((hotkey, index): Identity => ({
      uid: identities.length + index,
      hotkey,
      coldkey: hotkey,
      stake: EXTRA_VALIDATOR_STAKE,
      incentive: 0,
      validatorPermit: true,
    }));
  const neurons: MetagraphNeuron[] = [...identities, ...extra].map((identity) => ({
    uid: identity.uid,
    hotkey: identity.hotkey,
    coldkey: identity.coldkey,
    axon_url: axonUrls.get(identity.uid) ?? null,
    stake: identity.stake,
    incentive: identity.incentive,
    validator_permit: identity.validatorPermit,
  }));
  return {
    network: 'devnet',
    netuid: DEVNET_NETUID,
    block: blockAt(writtenAt),
    updated_at: writtenAt.toISOString(),
    neurons,
  };
}

/** Writes through a temporary file and a rename, so a reader never sees half a file. */
export async function writeMetagraphFile(path: string, metagraph: MetagraphFile): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  const temporary = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  try {
    await writeFile(temporary, `${JSON.stringify(metagraph, null, 2)}\n`, 'utf8');
    await rename(temporary, path);
  } catch (error) {
    await rm(temporary, { force: true });
    throw error;
  }
}

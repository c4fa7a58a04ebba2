import type { ApiPromise } from '@polkadot/api';
import type { Codec } from '@polkadot/types/types';

/** A git commit SHA as a validator commits it: 40 hex characters. */
const SHA = /^[0-9a-f]{40}$/i;
/**
 * The `Data` variants that hold bytes as they are (`Raw0`..`Raw128`); the others are hashes or
 * none.
 */
const RAW = /^Raw\d+$/;

/**
 * A validator's commitment on the subnet (`Commitments.CommitmentOf(netuid, hotkey)`): the
 * block it was made in and either the git SHA it names or why it names none.
 */
export type ChainCommitment =
  | { hotkey: string; block: number; sha: string }
  | { hotkey: string; block: number; sha?: undefined; problem: string };

/** Every commitment under `netuid`: the map's entries under that key prefix. */
export async function readCommitments(api: ApiPromise, netuid: number): Promise<ChainCommitment[]> {
  const entries = await api.query.commitments.commitmentOf.entries(netuid);
  return entries
    .map(([key, value]) => {
      const [, account] = key.args;
      return decodeCommitment(account.toString(), value as unknown as OptionOf<Registration>);
    })
    .filter((commitment): commitment is ChainCommitment => commitment !== undefined)
    .sort((a, b) => (a.hotkey < b.hotkey ? -1 : a.hotkey > b.hotkey ? 1 : 0));
}

/** One hotkey's commitment under `netuid`, or undefined when it has none. */
export async function readCommitment(
  api: ApiPromise,
  netuid: number,
  hotkey: string,
): Promise<ChainCommitment | undefined> {
  const value = await api.query.commitments.commitmentOf(netuid, hotkey);
  return decodeCommitment(hotkey, value as unknown as OptionOf<Registration>);
}

/**
 * A vote is the first item of `info.fields` when it is raw bytes (`Raw0`..`Raw128`) spelling a
 * SHA in ASCII: the subnet's readers (dynamic_desirability/chain_utils.py, the SDK's
 * get_commitment) take the first field whatever follows it. Its uploader commits one `Raw40`; a
 * hash variant (`Sha256`, …) is no text, so it is no vote. Anything else is kept with the reason.
 */
export function decodeCommitment(
  hotkey: string,
  value: OptionOf<Registration>,
): ChainCommitment | undefined {
  if (value.isNone) return undefined;
  const registration = value.unwrap();
  const block = Number(registration.block.toString());
  const [field] = registration.info.fields;
  if (!field) return { hotkey, block, problem: 'the commitment has no fields' };
  if (!RAW.test(field.type))
    return {
      hotkey,
      block,
      problem: `the commitment is a ${field.type}, not raw bytes (a git SHA)`,
    };
  const text = Buffer.from(field.value.toU8a(true)).toString('latin1');
  if (!SHA.test(text))
    return { hotkey, block, problem: 'the commitment is not a git SHA (40 hex characters)' };
  return { hotkey, block, sha: text.toLowerCase() };
}

interface OptionOf<T> {
  isNone: boolean;
  unwrap(): T;
}

/** `PalletCommitmentsRegistration` as the recorded runtime's metadata types it. */
interface Registration {
  block: Codec;
  info: { fields: Iterable<DataField> };
}

/** One `Data` item: its variant name (`Raw40`, `Sha256`, …) and its value. */
interface DataField {
  type: string;
  value: Codec;
}

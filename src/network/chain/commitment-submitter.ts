import type { ApiPromise, SubmittableResult } from '@polkadot/api';
import type { Signer, SignerResult } from '@polkadot/api/types';
import type { DispatchError } from '@polkadot/types/interfaces';
import type { SignerPayloadRaw } from '@polkadot/types/types';
import { hexToU8a, stringToU8a, u8aConcat, u8aToHex } from '@polkadot/util';
import { blake2AsU8a } from '@polkadot/util-crypto';
import { INCLUSION_TIMEOUT_MS } from '../../config/publication-timeouts';
import { Sr25519Keypair } from '../bittensor/keypair';
import { ruleOfError } from './commitment-window';
import { CommitmentRateLimitedError, Inclusion } from './commitment-results';
import { SubtensorConnection } from './subtensor-connection';

/**
 * Commits a Gravity commit's SHA on chain as the subnet's validators do:
 * `Commitments.set_commitment(netuid, { fields: [Raw40(sha as ASCII)] })`, signed by the
 * validator's hotkey, and waits until it is in a block. The key stays in Sr25519Keypair: the
 * client gets a signer that asks it to sign, never the secret.
 */
export class CommitmentSubmitter {
  private readonly signer: Signer;

  constructor(
    private readonly connection: SubtensorConnection,
    private readonly keypair: Sr25519Keypair,
    private readonly netuid: number,
  ) {
    this.signer = { signRaw: (payload) => Promise.resolve(this.sign(payload)) };
  }

  async commit(sha: string): Promise<Inclusion> {
    if (!/^[0-9a-f]{40}$/.test(sha)) throw new Error(`not a commit SHA: ${sha}`);
    return this.connection.useLong(
      (api) =>
        new Promise<Inclusion>((resolve, reject) => {
          const call = api.tx.commitments.setCommitment(this.netuid, {
            fields: [{ Raw40: stringToU8a(sha) }],
          });
          let stop: (() => void) | undefined;
          let settled = false;
          // A connection lost while watching ends the wait: the watch never resumes on another.
          const lost = () =>
            settle(() => reject(new Error('the connection to the node closed before inclusion')));
          const settle = (outcome: () => void) => {
            if (settled) return;
            settled = true;
            api.off('disconnected', lost);
            stop?.();
            outcome();
          };
          api.on('disconnected', lost);
          const onStatus = (result: SubmittableResult) => {
            const { status } = result;
            if (status.isInBlock || status.isFinalized) {
              const blockHash = (status.isInBlock ? status.asInBlock : status.asFinalized).toHex();
              if (result.dispatchError)
                return settle(() =>
                  reject(
                    dispatchFailure(api, result.dispatchError!, result.blockNumber?.toNumber()),
                  ),
                );
              if (result.blockNumber === undefined)
                return settle(() =>
                  reject(new Error(`included in ${blockHash}, events unreadable`)),
                );
              const blockNumber = result.blockNumber.toNumber();
              return settle(() => resolve({ blockNumber, blockHash }));
            }
            if (
              status.isInvalid ||
              status.isDropped ||
              status.isUsurped ||
              status.isFinalityTimeout
            )
              settle(() => reject(new Error(`the node gave the transaction up: ${status.type}`)));
          };
          call.signAndSend(this.keypair.address, { signer: this.signer, nonce: -1 }, onStatus).then(
            (unsubscribe) => {
              stop = unsubscribe;
              if (settled) unsubscribe();
            },
            (error: Error) => settle(() => reject(error)),
          );
        }),
      INCLUSION_TIMEOUT_MS,
    );
  }

  /**
   * The signature of an extrinsic payload as the chain checks it: of the payload's bytes, or of
   * their blake2-256 hash when longer than 256 bytes; sr25519, so prefixed with MultiSignature's
   * variant 1.
   */
  private sign(payload: SignerPayloadRaw): SignerResult {
    const bytes = hexToU8a(payload.data);
    const message = bytes.length > 256 ? blake2AsU8a(bytes) : bytes;
    const signature = hexToU8a(this.keypair.sign(message));
    return { id: 0, signature: u8aToHex(u8aConcat(new Uint8Array([1]), signature)) };
  }
}

function dispatchFailure(api: ApiPromise, error: DispatchError, block: number | undefined): Error {
  if (error.isModule) {
    try {
      const { section, name, docs } = api.registry.findMetaError(error.asModule);
      const message = `${section}.${name}${docs.length ? `: ${docs.join(' ').trim()}` : ''}`;
      const rule = section === 'commitments' ? ruleOfError(name) : undefined;
      if (rule) return new CommitmentRateLimitedError(message, rule, block);
      return new Error(`the chain refused the commitment: ${message}`);
    } catch {
      // An error this runtime's metadata does not name: reported as the chain sent it.
    }
  }
  return new Error(`the chain refused the commitment: ${error.toString()}`);
}

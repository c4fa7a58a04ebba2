import { randomBytes } from 'node:crypto';
import type { Signer } from '@polkadot/api/types';
import { hexToU8a, u8aToHex } from '@polkadot/util';
import { blake2AsU8a, sr25519Verify } from '@polkadot/util-crypto';
import { cryptoReady, Sr25519Keypair } from '../bittensor/keypair';
import { CommitmentSubmitter } from './commitment-submitter';
import { CommitmentRateLimitedError } from './commitment-results';

const SHA = '3f786850e387550fdab836ed7e6dc881de23001b';

type StatusCallback = (result: unknown) => void;

/**
 * A submitter on a fake node: `signAndSend` hands its options (the signer) and its status
 * callback to `send`; a dispatch error is the Commitments pallet's `errorName`.
 */
function submitterOn(
  send: (options: { signer: Signer }, onStatus: StatusCallback) => void,
  keypair: Sr25519Keypair = { address: '5F' } as never,
  errorName = '',
): CommitmentSubmitter {
  const api = {
    on: () => undefined,
    off: () => undefined,
    registry: {
      findMetaError: () => ({ section: 'commitments', name: errorName, docs: [] }),
    },
    tx: {
      commitments: {
        setCommitment: () => ({
          signAndSend: (
            _address: string,
            options: { signer: Signer },
            onStatus: StatusCallback,
          ) => {
            send(options, onStatus);
            return Promise.resolve(() => undefined);
          },
        }),
      },
    },
  };
  const connection = {
    useLong: (work: (api: unknown) => Promise<unknown>) => work(api),
  };
  return new CommitmentSubmitter(connection as never, keypair, 13);
}

/**
 * A commitment included in a block with the Commitments pallet's error `name` (the recorded
 * runtime knows only one of the two waiting errors, so the e2e spec meets only that one).
 */
function refusedWith(name: string) {
  const inBlockWithError = (_options: unknown, onStatus: StatusCallback) =>
    onStatus({
      status: { isInBlock: true, asInBlock: { toHex: () => '0x01' } },
      dispatchError: { isModule: true, asModule: {} },
      blockNumber: { toNumber: () => 6_852_692 },
    });
  return submitterOn(inBlockWithError, undefined, name).commit(SHA);
}

/** The signer a submitter hands @polkadot/api, which signs with `keypair`. */
async function signerFor(keypair: Sr25519Keypair): Promise<Signer> {
  let signer: Signer | undefined;
  const capture = (options: { signer: Signer }, onStatus: StatusCallback) => {
    signer = options.signer;
    onStatus({ status: { isInvalid: true, type: 'Invalid' } });
  };
  await submitterOn(capture, keypair)
    .commit(SHA)
    .catch(() => undefined);
  return signer!;
}

beforeAll(() => cryptoReady());

describe(CommitmentSubmitter.name, () => {
  // The chain's rate limit asks to wait: the worker keeps the vote pushed and retries it later.
  // Which rule and which block: the worker reads off the chain when it will take it.
  it.each([
    ['CommitmentSetRateLimitExceeded', 'rate'],
    ['SpaceLimitExceeded', 'space'],
  ])('takes %s as the chain asking to wait (its %s rule)', async (name, rule) => {
    const refusal = await refusedWith(name).catch((error: Error) => error);
    expect(refusal).toBeInstanceOf(CommitmentRateLimitedError);
    expect(refusal).toMatchObject({ rule, block: 6_852_692 });
  });

  // The worker records the failure and retries later; a wait on a dead watch would last all of
  // INCLUSION_TIMEOUT_MS, and a vote committed with garbage would be no vote.
  it('refuses what is not a commit SHA before the node is asked', async () => {
    const send = jest.fn((_options: unknown, onStatus: StatusCallback) =>
      onStatus({ status: { isInvalid: true, type: 'Invalid' } }),
    );
    await expect(submitterOn(send).commit(SHA.toUpperCase())).rejects.toThrow('not a commit SHA');
    expect(send).not.toHaveBeenCalled();
  });

  it('ends the wait when the connection to the node closes before inclusion', async () => {
    const listeners = new Map<string, () => void>();
    const api = {
      on: (event: string, listener: () => void) => listeners.set(event, listener),
      off: (event: string) => listeners.delete(event),
      tx: {
        commitments: {
          setCommitment: () => ({
            signAndSend: () => {
              // Sent; the node is lost before any status comes back.
              setImmediate(() => listeners.get('disconnected')?.());
              return Promise.resolve(unsubscribe);
            },
          }),
        },
      },
    };
    const unsubscribe = jest.fn();
    const connection = { useLong: (work: (api: unknown) => Promise<unknown>) => work(api) };
    const submitter = new CommitmentSubmitter(connection as never, { address: '5F' } as never, 13);
    await expect(submitter.commit(SHA)).rejects.toThrow(
      'the connection to the node closed before inclusion',
    );
    expect(listeners.has('disconnected')).toBe(false);
    expect(unsubscribe).toHaveBeenCalled();
  });

  it('takes an inclusion whose events cannot be read as a failure, naming the block', async () => {
    const inBlockUnread = (_options: unknown, onStatus: StatusCallback) =>
      onStatus({ status: { isInBlock: true, asInBlock: { toHex: () => '0x02' } } });
    await expect(submitterOn(inBlockUnread).commit(SHA)).rejects.toThrow(
      'included in 0x02, events unreadable',
    );
  });

  it('takes any other refusal as a failure', async () => {
    await expect(refusedWith('TooManyFieldsInCommitmentInfo')).rejects.toThrow(
      'the chain refused the commitment: commitments.TooManyFieldsInCommitmentInfo',
    );
  });

  // @polkadot/api hands a signRaw signer the signing payload as it is (SignerPayload.toRaw);
  // the chain checks the signature over it when it is at most 256 bytes, else over its
  // blake2-256 hash (sp_runtime's SignedPayload; @polkadot/types' own signing does the same).
  // A signature over the wrong bytes is an extrinsic the node refuses: no vote is committed.
  it.each([
    [255, 'the payload'],
    [256, 'the payload'],
    [257, 'its blake2-256 hash'],
    [1024, 'its blake2-256 hash'],
  ])('signs a %d-byte payload over %s, as an sr25519 MultiSignature', async (length, over) => {
    const keypair = Sr25519Keypair.fromUri('//Validator');
    const signer = await signerFor(keypair);
    const payload = randomBytes(length);

    const { signature } = await signer.signRaw!({
      address: keypair.address,
      data: u8aToHex(payload),
      type: 'payload',
    });

    const bytes = hexToU8a(signature);
    expect(bytes).toHaveLength(65);
    expect(bytes[0]).toBe(1); // MultiSignature's Sr25519 variant
    const signed = over === 'the payload' ? payload : blake2AsU8a(payload, 256);
    expect(sr25519Verify(signed, bytes.subarray(1), keypair.publicKey)).toBe(true);
  });
});

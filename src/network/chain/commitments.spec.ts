import { useConnectedChainReplay } from '../../../test/support/connected-chain-replay';
import { Sr25519Keypair } from '../bittensor/keypair';
import type { Codec } from '@polkadot/types/types';
import { decodeCommitment, readCommitment, readCommitments } from './commitments';

const [ALICE, BOB, CHARLIE] = ['//Alice', '//Bob', '//Charlie'].map(
  (uri) => Sr25519Keypair.fromUri(uri).address,
);
const SHA = '3f786850e387550fdab836ed7e6dc881de23001b';

describe('readCommitments against the chain stand-in (recorded finney metadata)', () => {
  const chain = useConnectedChainReplay();

  it('lists every commitment under the netuid, a raw SHA as a vote and anything else with a reason', async () => {
    chain.replay.setCommitment(13, ALICE, SHA.toUpperCase(), 10);
    chain.replay.setCommitment(13, BOB, 'short', 11);
    chain.replay.setCommitmentFields(13, CHARLIE, [{ Raw40: `0x${'7a'.repeat(40)}` }], 12);
    chain.replay.setCommitment(14, ALICE, SHA, 13);

    const commitments = await chain.connection.use((api) => readCommitments(api, 13));
    expect(commitments).toEqual(
      [
        { hotkey: BOB, block: 11, problem: 'the commitment is not a git SHA (40 hex characters)' },
        {
          hotkey: CHARLIE,
          block: 12,
          problem: 'the commitment is not a git SHA (40 hex characters)',
        },
        { hotkey: ALICE, block: 10, sha: SHA },
      ].sort((a, b) => (a.hotkey < b.hotkey ? -1 : 1)),
    );
    expect(chain.replay.calls).toEqual(
      expect.arrayContaining(['state_getKeysPaged', 'state_queryStorageAt']),
    );
  });

  it('reads one hotkey’s commitment, and none for a hotkey without', async () => {
    expect(await chain.connection.use((api) => readCommitment(api, 14, ALICE))).toEqual({
      hotkey: ALICE,
      block: 13,
      sha: SHA,
    });
    chain.replay.clearCommitment(14, ALICE);
    expect(await chain.connection.use((api) => readCommitment(api, 14, ALICE))).toBeUndefined();
  });

  // As the subnet's readers do (dynamic_desirability/chain_utils.py, the SDK's get_commitment):
  // the first field, of any raw length, whatever follows it.
  it('reads the first field when it is raw bytes, whatever follows it', async () => {
    const ascii = `0x${Buffer.from(SHA).toString('hex')}`;
    chain.replay.setCommitmentFields(13, ALICE, [{ Raw40: ascii }, { Raw1: '0x01' }], 20);
    chain.replay.setCommitmentFields(13, BOB, [{ Sha256: `0x${'ab'.repeat(32)}` }], 21);
    chain.replay.setCommitmentFields(13, CHARLIE, [], 22);

    const read = (hotkey: string) => chain.connection.use((api) => readCommitment(api, 13, hotkey));
    expect(await read(ALICE)).toEqual({ hotkey: ALICE, block: 20, sha: SHA });
    expect(await read(BOB)).toEqual({
      hotkey: BOB,
      block: 21,
      problem: 'the commitment is a Sha256, not raw bytes (a git SHA)',
    });
    expect(await read(CHARLIE)).toEqual({
      hotkey: CHARLIE,
      block: 22,
      problem: 'the commitment has no fields',
    });
  });
});

describe(decodeCommitment.name, () => {
  const field = (type: string, text: string) => ({
    type,
    value: { toU8a: () => Buffer.from(text, 'latin1') } as unknown as Codec,
  });
  const decode = (fields: { type: string; value: Codec }[]) =>
    decodeCommitment(ALICE, {
      isNone: false,
      unwrap: () => ({ block: { toString: () => '7' } as Codec, info: { fields } }),
    });

  it('takes a SHA from a first field of any raw length, then checks it is a SHA', () => {
    expect(decode([field('Raw40', SHA), field('Raw3', 'xyz')])).toEqual({
      hotkey: ALICE,
      block: 7,
      sha: SHA,
    });
    expect(decode([field('Raw41', `${SHA}\n`)])).toMatchObject({
      problem: 'the commitment is not a git SHA (40 hex characters)',
    });
    expect(decode([field('BlakeTwo256', SHA.slice(0, 32)), field('Raw40', SHA)])).toMatchObject({
      problem: 'the commitment is a BlakeTwo256, not raw bytes (a git SHA)',
    });
  });
});

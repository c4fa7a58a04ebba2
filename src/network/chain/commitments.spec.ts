import { useConnectedChainReplay } from '../../../test/support/connected-chain-replay';
import { Sr25519Keypair } from '../bittensor/keypair';
import { readCommitment, readCommitments } from './commitments';

const [ALICE, BOB, CHARLIE] = ['//Alice', '//Bob', '//Charlie'].map(
  (uri) => Sr25519Keypair.fromUri(uri).address,
);
const SHA = '3f786850e387550fdab836ed7e6dc881de23001b';

describe('readCommitments against the chain stand-in (recorded finney metadata)', () => {
  const chain = useConnectedChainReplay();

  it('lists every commitment under the netuid, a Raw40 SHA as a vote and anything else with a reason', async () => {
    chain.replay.setCommitment(13, ALICE, SHA.toUpperCase(), 10);
    chain.replay.setCommitment(13, BOB, 'short', 11);
    chain.replay.setCommitmentFields(13, CHARLIE, [{ Raw40: `0x${'7a'.repeat(40)}` }], 12);
    chain.replay.setCommitment(14, ALICE, SHA, 13);

    const commitments = await chain.connection.use((api) => readCommitments(api, 13));
    expect(commitments).toEqual(
      [
        { hotkey: BOB, block: 11, problem: 'the commitment is a Raw5, not a Raw40 git SHA' },
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
    chain.replay.setCommitmentFields(
      13,
      BOB,
      [{ Raw40: `0x${Buffer.from(SHA).toString('hex')}` }, { Raw1: '0x01' }],
      20,
    );
    expect(await chain.connection.use((api) => readCommitment(api, 14, ALICE))).toEqual({
      hotkey: ALICE,
      block: 13,
      sha: SHA,
    });
    expect(await chain.connection.use((api) => readCommitment(api, 13, BOB))).toEqual({
      hotkey: BOB,
      block: 20,
      problem: 'the commitment has 2 fields, not one Raw40',
    });
    chain.replay.clearCommitment(14, ALICE);
    expect(await chain.connection.use((api) => readCommitment(api, 14, ALICE))).toBeUndefined();
  });
});

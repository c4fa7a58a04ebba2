import { useConnectedChainReplay } from '../../../test/support/connected-chain-replay';
import { Sr25519Keypair } from '../bittensor/keypair';
import { ValidatorIdentity } from '../bittensor/validator-identity';
import { ChainCommitmentsService } from './chain-commitments.service';
import { testConfig } from '../../../test/support/test-config';

const [ALICE, BOB] = ['//Alice', '//Bob'].map((uri) => Sr25519Keypair.fromUri(uri).address);
const SHA = '3f786850e387550fdab836ed7e6dc881de23001b';
const OTHER_SHA = 'da39a3ee5e6b4b0d3255bfef95601890afd80709';
const config = testConfig({ netuid: 13 });
const identity = new ValidatorIdentity(Sr25519Keypair.fromUri('//Validator'));

describe(ChainCommitmentsService.name, () => {
  const chain = useConnectedChainReplay();

  // Votes on another subnet are no votes on this one.
  it('reads the commitments under NETUID, and nothing committed under another netuid', async () => {
    chain.replay.setCommitment(13, ALICE, SHA, 10);
    chain.replay.setCommitment(14, BOB, OTHER_SHA, 11);
    chain.replay.setCommitment(14, ALICE, OTHER_SHA, 12);
    const service = new ChainCommitmentsService(chain.connection, config, identity);

    expect(service.available).toBe(true);
    expect(await service.all()).toEqual([{ hotkey: ALICE, block: 10, sha: SHA }]);
    expect(await service.of(ALICE)).toEqual({
      hotkey: ALICE,
      block: 10,
      sha: SHA,
    });
    expect(await service.of(BOB)).toBeUndefined();
  });

  // The node's AccountId refuses it with a plain error: get_desirabilities answered a 500 where
  // a hotkey read locally gets its 404 (an audit's finding).
  it('finds no commitment for a hotkey that is no address, as for one that committed nothing', async () => {
    const service = new ChainCommitmentsService(chain.connection, config, identity);
    for (const hotkey of ['abc', `${ALICE.slice(0, -1)}0`, ALICE.slice(0, 40), '0x1234'])
      expect(await service.of(hotkey)).toBeUndefined();
  });

  it('is unavailable without SUBTENSOR_URL, and says why when asked anyway', () => {
    const service = new ChainCommitmentsService(null, config, identity);
    expect(service.available).toBe(false);
    expect(() => service.all()).toThrow(/no chain configured/);
    expect(() => service.commit(SHA)).toThrow(/no chain configured/);
  });
});

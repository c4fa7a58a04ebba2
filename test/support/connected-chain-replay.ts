import { SubtensorConnection } from '../../src/network/chain/subtensor-connection';
import { ChainReplay, startChainReplay } from './chain-replay';

/** The chain stand-in and one connection to it, shared by the tests of a describe block. */
export interface ConnectedChainReplay {
  replay: ChainReplay;
  connection: SubtensorConnection;
}

/**
 * Starts the chain stand-in and connects to it before the block's tests, and closes both after:
 * call inside a `describe`, read the fields inside tests.
 */
export function useConnectedChainReplay(): ConnectedChainReplay {
  const chain = {} as ConnectedChainReplay;
  beforeAll(async () => {
    chain.replay = await startChainReplay();
    chain.connection = new SubtensorConnection(chain.replay.url, 10_000);
  });
  afterAll(async () => {
    await chain.connection.close();
    await chain.replay.stop();
  });
  return chain;
}

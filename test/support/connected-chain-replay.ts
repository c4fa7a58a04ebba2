import {
  ConnectionLogger,
  SubtensorConnection,
} from '../../src/network/chain/subtensor-connection';
import { ChainReplay, startChainReplay } from './chain-replay';

/** How long one use of the replay may take: it always answers, however loaded the machine. */
export const CHAIN_USE_TIMEOUT_MS = 60_000;
/** A test that makes a few such uses. */
export const CHAIN_TEST_TIMEOUT_MS = 120_000;
/**
 * For connections whose "connected to subtensor" line no test reads: the run's output stays quiet.
 */
export const QUIET_CONNECTION_LOGGER: ConnectionLogger = {
  log: () => undefined,
  warn: () => undefined,
};

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
    // Generous: the replay answers, but a read of 1,024 neurons takes seconds on a loaded machine.
    chain.connection = new SubtensorConnection(
      chain.replay.url,
      CHAIN_USE_TIMEOUT_MS,
      QUIET_CONNECTION_LOGGER,
    );
  });
  afterAll(async () => {
    await chain.connection.close();
    await chain.replay.stop();
  });
  return chain;
}

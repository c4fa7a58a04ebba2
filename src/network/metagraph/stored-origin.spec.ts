import type { ChainIdentity } from '../chain/subtensor-connection';
import { foreignOrigin } from './stored-origin';

const MAINNET = '0x2f0555cc76fc2840a25a6ea3b9637146806f1f44b090c175ffde2a7e5ab36c03';
const TESTNET = `0x${'11'.repeat(32)}`;

const fromFile = (path: string, network: 'file' | 'devnet' = 'file') => ({
  network,
  source: `file ${path}`,
  block: 10,
  genesisHash: null,
});
const fromNode = (address: string, netuid: number, genesisHash: string | null = MAINNET) => ({
  network: 'subtensor' as const,
  source: `subtensor ${address} netuid ${netuid}`,
  block: 6_000_000,
  genesisHash,
});
const file = (path: string) => ({ description: `file ${path}` });
/** A node source; `genesis`: the chain its connection has shown (none: never connected). */
const node = (address: string, netuid: number, genesis?: string) => ({
  description: `subtensor ${address} netuid ${netuid}`,
  chain: genesis === undefined ? undefined : ({ genesisHash: genesis } as ChainIdentity),
});

describe(foreignOrigin.name, () => {
  it('uses a metagraph stored from the configured file or node', () => {
    expect(foreignOrigin(fromFile('/data/metagraph.json'), file('/data/metagraph.json'))).toBe(
      undefined,
    );
    expect(
      foreignOrigin(fromFile('/data/metagraph.json', 'devnet'), file('/data/metagraph.json')),
    ).toBe(undefined);
    expect(foreignOrigin(fromNode('wss://node', 13), node('wss://node', 13))).toBe(undefined);
    // A row stored before its chain was recorded is the same node's.
    expect(foreignOrigin(fromNode('wss://node', 13, null), node('wss://node', 13))).toBe(undefined);
  });

  it("uses a row of the first release, which named the node by its URL's path too", () => {
    expect(foreignOrigin(fromNode('wss://node/ws/', 13), node('wss://node', 13))).toBe(undefined);
  });

  it('refuses a file’s metagraph on a node, and a node’s on a file, saying both to the operator', () => {
    expect(foreignOrigin(fromFile('/tmp/devnet.json', 'devnet'), node('wss://node', 13))).toEqual({
      why:
        'the stored metagraph is not from the configured source: no miners are used until a ' +
        'read of that source succeeds',
      detail:
        'the stored metagraph (devnet, from file /tmp/devnet.json, block 10) is not from the ' +
        'configured source (subtensor wss://node netuid 13): no miners are used until a read of ' +
        'it succeeds',
    });
    expect(foreignOrigin(fromNode('wss://node', 13), file('/data/metagraph.json'))).toMatchObject({
      why: expect.not.stringMatching(/wss:|\/data/),
      detail: expect.stringMatching(
        /from subtensor wss:\/\/node netuid 13, .* \(file \/data\/metagraph.json\)/,
      ),
    });
  });

  it('refuses another file, another netuid and another node whose chain is not known yet', () => {
    expect(foreignOrigin(fromFile('/a.json'), file('/b.json'))).toBeDefined();
    expect(foreignOrigin(fromNode('wss://node', 1), node('wss://node', 13))).toBeDefined();
    // A testnet node's metagraph, the configured mainnet node never reached.
    expect(
      foreignOrigin(fromNode('wss://test.node', 13, TESTNET), node('wss://main.node', 13)),
    ).toBeDefined();
  });

  it("uses another node's metagraph once the connection shows the same chain, for the same netuid", () => {
    expect(
      foreignOrigin(fromNode('wss://a.node', 13), node('wss://b.node', 13, MAINNET)),
    ).toBeUndefined();
    expect(
      foreignOrigin(fromNode('wss://a.node', 13, TESTNET), node('wss://b.node', 13, MAINNET)),
    ).toBeDefined();
    expect(
      foreignOrigin(fromNode('wss://a.node', 1), node('wss://b.node', 13, MAINNET)),
    ).toBeDefined();
    // Its chain not recorded: not known to be the same.
    expect(
      foreignOrigin(fromNode('wss://a.node', 13, null), node('wss://b.node', 13, MAINNET)),
    ).toBeDefined();
  });
});

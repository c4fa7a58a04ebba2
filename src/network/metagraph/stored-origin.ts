import { nodeAddress } from '../../common/security/node-address';
import type { StoredMetagraph } from '../miners.repository';
import type { NetworkProblem } from '../network-status';
import type { MetagraphSource } from './metagraph-source';

/** A chain source's description: `subtensor <node address> netuid <n>`. */
const CHAIN_DESCRIPTION = /^subtensor (\S+) netuid (\d+)$/;

/** What any key's holder is told of a foreign origin: the kind of problem, no source named. */
const FOREIGN_ORIGIN =
  'the stored metagraph is not from the configured source: no miners are used until a read of ' +
  'that source succeeds';

/**
 * Why the stored metagraph is not the configured source's, so that no miner of it may be used
 * (undefined: it is), in public words and in the operator's (NetworkProblem). A database first
 * run on one source (a devnet's or recorded file, a testnet node, another netuid) and restarted
 * on another that cannot be read would otherwise serve the first one's miners as the configured
 * network's. The origin is what `metagraph_state` has always recorded, the source's
 * description: a file's path, or a node's address (scheme and host) and netuid. A row of the
 * first release named the node by its URL with a path: compared by address. Another address is
 * the same origin once its connection has shown the stored chain (genesis hash) and the netuid
 * is the same. The same description is the same origin even when the node now serves another
 * chain: a read decides then (suspicious reads, blocks).
 */
export function foreignOrigin(
  stored: Pick<StoredMetagraph, 'network' | 'source' | 'block' | 'genesisHash'>,
  source: Pick<MetagraphSource, 'description' | 'chain'>,
): NetworkProblem | undefined {
  if (sameSource(stored.source, source.description) || sameChain(stored, source)) return undefined;
  // The descriptions name a file's path or the node's address: the operator's detail only.
  return {
    why: FOREIGN_ORIGIN,
    detail:
      `the stored metagraph (${stored.network}, from ${stored.source}, block ${stored.block}) is ` +
      `not from the configured source (${source.description}): no miners are used until a read ` +
      'of it succeeds',
  };
}

function sameSource(stored: string, configured: string): boolean {
  if (stored === configured) return true;
  const [storedNode, configuredNode] = [nodeOf(stored), nodeOf(configured)];
  return (
    storedNode !== undefined &&
    configuredNode !== undefined &&
    storedNode.address === configuredNode.address &&
    storedNode.netuid === configuredNode.netuid
  );
}

/** Another address serving the stored chain, as its connection (made already) has shown. */
function sameChain(
  stored: Pick<StoredMetagraph, 'network' | 'source' | 'genesisHash'>,
  source: Pick<MetagraphSource, 'description' | 'chain'>,
): boolean {
  const configuredNode = nodeOf(source.description);
  return (
    stored.network === 'subtensor' &&
    source.chain !== undefined &&
    configuredNode !== undefined &&
    stored.genesisHash === source.chain.genesisHash &&
    nodeOf(stored.source)?.netuid === configuredNode.netuid
  );
}

function nodeOf(description: string): { address: string; netuid: number } | undefined {
  const match = CHAIN_DESCRIPTION.exec(description);
  return match ? { address: nodeAddress(match[1]), netuid: Number(match[2]) } : undefined;
}

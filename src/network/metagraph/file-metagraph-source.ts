import { isRecord } from '../../common/is-record';
import { watchFileChanges } from '../../common/files/watch-file-changes';
import { readFile } from 'node:fs';
import { promisify } from 'node:util';
import { MetagraphNetwork } from '../miners.repository';
import { MetagraphFile, MetagraphNeuron } from '../protocol';
import { axonAddress } from '../transport/axon-http';
import { MetagraphSource } from './metagraph-source';

const readFileAsync = promisify(readFile);
const POLL_INTERVAL_MS = 1000;

/**
 * Reads the metagraph JSON file (format in docs/miner-protocol.md), and polls it for changes
 * (watchFileChanges: writers replace it atomically). A file that names no netuid is the
 * configured one's (NETUID).
 */
export class FileMetagraphSource implements MetagraphSource {
  constructor(
    private readonly path: string,
    private readonly netuid: number,
  ) {}

  get description(): string {
    return `file ${this.path}`;
  }

  networkOf(metagraph: MetagraphFile): MetagraphNetwork {
    return metagraph.network ?? 'file';
  }

  async read(): Promise<MetagraphFile> {
    const text = await readFileAsync(this.path, 'utf8');
    return parseMetagraph(JSON.parse(text) as unknown, this.netuid);
  }

  watch(sync: () => Promise<void>): () => void {
    return watchFileChanges(this.path, POLL_INTERVAL_MS, () => void sync());
  }
}

/**
 * Validates the file's shape; a bad file must never wipe the miners we know. A file without
 * `netuid` is `netuid`'s: read as netuid 0, it passed as another subnet's, which the
 * suspicious-read check does not judge, and `{"neurons": []}` deregistered every miner (an
 * audit's finding).
 */
export function parseMetagraph(value: unknown, netuid: number): MetagraphFile {
  if (!isRecord(value) || !Array.isArray(value.neurons))
    throw new Error('metagraph: expected an object with a `neurons` array');
  const neurons = value.neurons.map((neuron, index) => parseNeuron(neuron, index));
  const uids = new Set(neurons.map((neuron) => neuron.uid));
  if (uids.size !== neurons.length) throw new Error('metagraph: duplicate uid');
  return {
    ...(value.network === 'devnet' ? { network: 'devnet' as const } : {}),
    netuid: typeof value.netuid === 'number' ? value.netuid : netuid,
    block: typeof value.block === 'number' ? value.block : 0,
    updated_at: typeof value.updated_at === 'string' ? value.updated_at : new Date().toISOString(),
    neurons,
  };
}

function parseNeuron(value: unknown, index: number): MetagraphNeuron {
  const where = `metagraph: neurons[${index}]`;
  if (!isRecord(value)) throw new Error(`${where} is not an object`);
  const {
    uid,
    hotkey,
    coldkey,
    axon_url: axonUrl,
    stake,
    incentive,
    validator_permit: validatorPermit,
  } = value;
  if (!Number.isInteger(uid) || (uid as number) < 0)
    throw new Error(`${where}.uid must be a non-negative integer`);
  if (typeof hotkey !== 'string' || hotkey.length === 0 || hotkey.length > 64)
    throw new Error(`${where}.hotkey must be a string`);
  if (typeof coldkey !== 'string' || coldkey.length === 0 || coldkey.length > 64)
    throw new Error(`${where}.coldkey must be a string`);
  if (axonUrl !== null && !(typeof axonUrl === 'string' && axonAddress(axonUrl))) {
    throw new Error(
      `${where}.axon_url must be http://host:port (axons speak plain HTTP; no path, credentials, query or fragment) or null`,
    );
  }
  if (typeof stake !== 'number' || !(stake >= 0))
    throw new Error(`${where}.stake must be a non-negative number`);
  if (typeof incentive !== 'number' || !(incentive >= 0))
    throw new Error(`${where}.incentive must be a non-negative number`);
  if (typeof validatorPermit !== 'boolean')
    throw new Error(`${where}.validator_permit must be a boolean`);
  return {
    uid: uid as number,
    hotkey,
    coldkey,
    axon_url: axonUrl,
    stake,
    incentive,
    validator_permit: validatorPermit,
  };
}

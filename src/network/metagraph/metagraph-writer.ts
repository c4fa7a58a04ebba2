import type { Logger } from '@nestjs/common';
import ipaddr from 'ipaddr.js';
import { isValidator } from '../../common/validator-standing';
import type { AppConfig } from '../../config/app-config';
import type { MetagraphNetwork, MinersRepository, StoredChain } from '../miners.repository';
import type { MetagraphFile, MetagraphNeuron } from '../protocol';
import type { MinerClient } from '../transport/miner-client';
import { axonAddress } from '../transport/axon-http';
import type { MetagraphSource } from './metagraph-source';
import { SuspiciousReads } from './suspicious-reads';

/**
 * Writes a metagraph read from the source into the miners table, for MetagraphService: a read
 * that would drop most neurons at once is refused (SuspiciousReads), axons outside
 * MINER_ALLOWED_NETWORKS or announced by several coldkeys' neurons are refused, the validators
 * are marked, and one line says what was applied.
 */
export class MetagraphWriter {
  private readonly suspiciousReads: SuspiciousReads;

  constructor(
    private readonly repository: MinersRepository,
    private readonly client: MinerClient,
    private readonly config: AppConfig,
    private readonly logger: Logger,
  ) {
    this.suspiciousReads = new SuspiciousReads(repository, logger);
  }

  /** Applies `metagraph`, read from `source`; the network it is of. */
  async apply(source: MetagraphSource, metagraph: MetagraphFile): Promise<MetagraphNetwork> {
    await this.suspiciousReads.refuseIfSuspicious(source, metagraph);
    const outside = await this.refusedAxons(metagraph.neurons);
    const shared = sharedAxons(metagraph.neurons);
    const refused = new Set([...outside, ...shared]);
    const validators = new Set(
      metagraph.neurons
        .filter((neuron) =>
          isValidator(
            { validatorPermit: neuron.validator_permit, stake: neuron.stake },
            this.config.network.validatorMinStake,
          ),
        )
        .map((neuron) => neuron.uid),
    );
    const network = source.networkOf(metagraph);
    const { hotkeyChanged, indexesDropped, otherChain } = await this.repository.syncNeurons(
      metagraph.neurons,
      {
        refused,
        validators,
        origin: {
          network,
          source: source.description,
          netuid: metagraph.netuid,
          block: metagraph.block,
          genesisHash: metagraph.genesis_hash ?? null,
        },
      },
    );
    if (otherChain) this.logger.warn(otherChainLine(source.description, metagraph, otherChain));
    const refusedNote =
      uidsNote(outside, 'axons outside MINER_ALLOWED_NETWORKS, never contacted') +
      uidsNote(
        shared,
        "neurons announcing an axon address another coldkey's neuron announces too, never contacted",
      );
    const replacedNote =
      hotkeyChanged.length > 0 ? `; new hotkeys on uids ${hotkeyChanged.join(', ')}` : '';
    const droppedNote =
      indexesDropped.length > 0
        ? `; indexes of uids ${indexesDropped.join(', ')} dropped (deregistered, new hotkey or now a validator)`
        : '';
    this.logger.log(
      `metagraph from ${source.description} at block ${metagraph.block}: ` +
        `${metagraph.neurons.length} neurons${refusedNote}${replacedNote}${droppedNote}`,
    );
    return network;
  }

  /** Uids whose axon host is (or resolves to) an address outside MINER_ALLOWED_NETWORKS. */
  private async refusedAxons(neurons: readonly MetagraphNeuron[]): Promise<Set<number>> {
    const refused = new Set<number>();
    await Promise.all(
      neurons.map(async (neuron) => {
        if (neuron.axon_url === null) return;
        const host = new URL(neuron.axon_url).hostname;
        if (!(await this.client.permitsHost(host))) refused.add(neuron.uid);
      }),
    );
    return refused;
  }
}

/**
 * Uids of the neurons whose axon address (host and port) a neuron of another coldkey announces
 * too. One axon answers for one hotkey: a call signed for another reaches its miner all the
 * same, which counts it against our hotkey's limit before it refuses the signature (401; the
 * SDK's axon blacklists, where the subnet's miner counts, before it verifies). Budgets are
 * counted per hotkey, so calling every neuron of such an address took that miner's budget once
 * per neuron (a churn audit: 12 calls against a limit of 10). `serve_axon` lets anyone announce
 * any address: none of them is called, and copying an honest miner's address costs it only this
 * gateway's calls until one of them moves, where calling could get it penalised.
 * Neurons of one coldkey at one address are an operator's own set-up, and common: netuid 1's
 * recorded metagraph has 102, 81 and 7 hotkeys of one coldkey each behind one address, which a
 * proxy routing by the axon's hotkey can serve with a budget per hotkey. They are called as any
 * neuron. Addresses are compared as dialled: an IPv4-mapped IPv6 address as its IPv4 one (the
 * chain renders an ipType-6 `::ffff:1.2.3.4` so, and the address policy and a dual-stack dial
 * read it as 1.2.3.4: a review), a host name lower-cased, with the port.
 */
export function sharedAxons(neurons: readonly MetagraphNeuron[]): Set<number> {
  const byAddress = new Map<string, MetagraphNeuron[]>();
  for (const neuron of neurons) {
    const address = neuron.axon_url === null ? undefined : dialledAddress(neuron.axon_url);
    if (address === undefined) continue;
    const group = byAddress.get(address);
    if (group) group.push(neuron);
    else byAddress.set(address, [neuron]);
  }
  return new Set(
    [...byAddress.values()]
      .filter((group) => new Set(group.map((neuron) => neuron.coldkey)).size > 1)
      .flatMap((group) => group.map((neuron) => neuron.uid)),
  );
}

/**
 * An axon's host and port as they are dialled (sharedAxons); undefined for a URL no call can be
 * made to (axonAddress), which no neuron shares.
 */
function dialledAddress(axonUrl: string): string | undefined {
  const address = axonAddress(axonUrl);
  if (!address) return undefined;
  const ip = ipaddr.isValid(address.ip) ? ipaddr.process(address.ip).toString() : address.ip;
  return `${ip} ${address.port}`;
}

/** `; N <what> (uids …)`, the uids listed up to 20; empty for none. */
function uidsNote(uids: ReadonlySet<number>, what: string): string {
  if (uids.size === 0) return '';
  return (
    `; ${uids.size} ${what}` +
    (uids.size <= 20 ? ` (uids ${[...uids].sort((a, b) => a - b).join(', ')})` : '')
  );
}

/**
 * A node's read of another chain than the stored metagraph's, from the same source: applied
 * whatever its block (docs/decisions.md, "The metagraph from the chain"). A new genesis means
 * the node behind the address serves another chain now: worth the operator's attention.
 */
function otherChainLine(source: string, metagraph: MetagraphFile, stored: StoredChain): string {
  const read = `genesis ${metagraph.genesis_hash ?? 'unknown'} at block ${metagraph.block}`;
  if (stored.genesisHash === null)
    return (
      `metagraph from ${source} (${read}) applied without comparing its block with the stored ` +
      `one's (block ${stored.block}): the stored one's chain was not recorded`
    );
  return (
    `metagraph from ${source} is of another chain (${read}) than the stored one (genesis ` +
    `${stored.genesisHash} at block ${stored.block}): the node now serves another chain (a reset ` +
    "testnet or local node?); applied, its blocks are not compared with the old chain's"
  );
}

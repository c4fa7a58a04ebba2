import { AppConfig } from '../../config/app-config';
import { IndexFreshness, loadedIndexes, whyUnusable } from '../../network/network-status';
import { NetworkService } from '../../network/network.service';
import {
  ChainStatusDto,
  MinerIndexStatusDto,
  MinersStatusDto,
  Network,
} from './dto/system-status.dto';
import { measured } from './timed-check';

/** The metagraph's status as the checks read it: undefined when it could not be read in time. */
export type MetagraphStatus = Awaited<ReturnType<NetworkService['metagraphStatus']>> | undefined;

/**
 * Counted from the metagraph in memory (no round trip: `latency_ms` null), so that a saturated
 * pool, whose wait outlasts the checks' second, no longer leaves the counts at 0.
 */
export function minersStatus(network: NetworkService): MinersStatusDto {
  const counts = network.countMiners();
  const hotkey = network.hotkeyCheck();
  const degraded = counts.available === 0 || hotkey?.problem !== undefined;
  // No hotkey problem while miners may not be called: none are loaded. The operator's words
  // (system-status only: health gives any key the counts, never this error).
  const calls = network.minerCalls();
  const error = calls.allowed ? hotkey?.problem : calls.detail;
  return {
    ...(error ? { error } : {}),
    status: degraded ? 'degraded' : 'healthy',
    latency_ms: null,
    available: counts.available,
    total: counts.total,
    serving: counts.serving,
    validators: counts.validators,
    address_refused: counts.addressRefused,
    hotkey_standing: hotkey?.standing ?? null,
  };
}

/**
 * The miners' data index: `degraded` while no miner's index is loaded, so that a dashboard
 * reading the statistics can tell "not loaded yet" from "the network holds nothing", and while
 * none loaded is usable (held by a miner the stored-data path may ask now: its "index not
 * loaded"), so that an operator reading it about that answer is not told all is well;
 * `degraded` too when it cannot be read in time (the database's own component says why it is away).
 */
export async function minerIndexStatus(network: NetworkService): Promise<MinerIndexStatusDto> {
  const read = await measured(() => network.indexFreshness());
  if ('error' in read)
    return {
      status: 'degraded',
      latency_ms: read.latency_ms,
      loaded: null,
      usable: null,
      newest_synced_at: null,
      oldest_synced_at: null,
      last_read_at: null,
      error: `miner index state unreadable: ${read.error.message}`,
    };
  const { loaded, usable, newestSyncedAt, oldestSyncedAt, lastReadAt } = read.value;
  const error =
    loaded === 0 ? noIndexLoaded(lastReadAt) : usable === 0 ? noIndexUsable(read.value) : undefined;
  return {
    status: error === undefined ? 'healthy' : 'degraded',
    latency_ms: read.latency_ms,
    loaded,
    usable,
    newest_synced_at: newestSyncedAt?.toISOString() ?? null,
    oldest_synced_at: oldestSyncedAt?.toISOString() ?? null,
    last_read_at: lastReadAt?.toISOString() ?? null,
    ...(error === undefined ? {} : { error }),
  };
}

/** Why no index is loaded: none read yet, or those read hold nothing (or were dropped since). */
function noIndexLoaded(lastReadAt: Date | null): string {
  const why =
    lastReadAt === null
      ? 'no index sync has read one yet'
      : `the indexes read hold no data, or were dropped since; the last was read at ${lastReadAt.toISOString()}`;
  return `no miner's index is loaded (${why}): the statistics count nothing and stored-data answers cannot find holders`;
}

/** Why no loaded index is usable: what keeps each miner holding one from being asked. */
function noIndexUsable(freshness: IndexFreshness): string {
  return (
    `${loadedIndexes(freshness.loaded)} loaded, but none is usable now: ${whyUnusable(freshness)}: ` +
    'on-demand answers from stored data say no miner holding one can be asked, and query_bucket ' +
    'finds no holder to ask (the statistics still count these indexes)'
  );
}

/**
 * A METAGRAPH_FILE whose last read failed: the miners' status says so (there is no chain
 * component for a file), keeping the counts of the last metagraph read.
 */
export function withFileProblem(
  miners: MinersStatusDto,
  metagraph: MetagraphStatus,
  config: AppConfig,
): MinersStatusDto {
  const attempt = metagraph?.lastAttempt;
  if (!config.network.metagraphFile || !attempt || attempt.ok) return miners;
  // The status's own word (why its `stored` is absent), read with it: the rule of the gate
  // (minerCalls) applied to this read, where the gate holds the last reload's.
  const notInUse = metagraph.storedNotInUse;
  return {
    ...miners,
    status: miners.status === 'healthy' ? 'degraded' : miners.status,
    error: `METAGRAPH_FILE could not be read: ${attempt.error}${notInUse ? `; ${notInUse}` : ''}`,
  };
}

/**
 * The stored metagraph's network: null until one was read (as documented), even with a source
 * configured. While it cannot be read (database away), the last one this process read (at
 * start or since, whoever read it), else what the configuration says: a devnet's
 * METAGRAPH_FILE would otherwise be reported as a file of the real network.
 */
export function networkOf(
  metagraph: MetagraphStatus,
  network: NetworkService,
  config: AppConfig,
): Network | null {
  if (!metagraph) return network.lastReadNetwork() ?? configuredNetwork(config);
  return metagraph.stored?.network ?? null;
}

function configuredNetwork(config: AppConfig): Network | null {
  if (config.network.subtensor) return 'subtensor';
  return config.network.metagraphFile ? 'file' : null;
}

export function chainStatus(metagraph: MetagraphStatus, config: AppConfig): ChainStatusDto {
  const disabled = {
    latency_ms: null,
    chain_name: null,
    genesis_hash: null,
    block: null,
    last_read_at: null,
    age_seconds: null,
  };
  if (!config.network.subtensor) return { status: 'disabled', ...disabled };
  if (!metagraph) return { status: 'degraded', ...disabled, error: 'database unavailable' };
  const { lastAttempt, stored, chain } = metagraph;
  const fromChain = stored?.network === 'subtensor' ? stored : undefined;
  // The age is the block's, not the read's: a node stuck at a block is read on and on.
  const advancedAt = fromChain ? (fromChain.blockAdvancedAt ?? fromChain.readAt) : undefined;
  const ageMs = advancedAt ? Date.now() - advancedAt.getTime() : null;
  const staleAfterMs = staleBlockMs(config.network.subtensor.syncIntervalMs);
  const stuck =
    ageMs !== null && ageMs > staleAfterMs
      ? `the node's block ${fromChain!.block} has not advanced since ` +
        `${advancedAt!.toISOString()} (over ${Math.round(staleAfterMs / 60_000)} minutes): ` +
        'the node is stuck or not syncing'
      : undefined;
  const error = lastAttempt?.ok ? stuck : (lastAttempt?.error ?? 'not read yet');
  return {
    status: error === undefined ? 'healthy' : 'degraded',
    latency_ms: null,
    chain_name: chain?.chain ?? null,
    genesis_hash: chain?.genesisHash ?? null,
    block: fromChain?.block ?? null,
    last_read_at: fromChain?.readAt.toISOString() ?? null,
    age_seconds: ageMs === null ? null : Math.round(ageMs / 1000),
    ...(error === undefined ? {} : { error }),
  };
}

/**
 * How long the stored block may stay the same before the chain counts as stale: a block comes
 * every 12 s, and a read every METAGRAPH_SYNC_INTERVAL; two intervals, and at least 10 minutes.
 */
export function staleBlockMs(syncIntervalMs: number): number {
  return Math.max(10 * 60_000, 2 * syncIntervalMs);
}

import { resolve } from 'node:path';
import { Clock } from '../common/clock/clock';
import { ClockSimulation } from '../common/clock/clock-simulation';
import { cryptoReady } from '../network/bittensor/keypair';
import { DataItem, MetagraphFile, MetagraphNeuron } from '../network/protocol';
import { MinerBehaviour } from './behaviour';
import { assignHoldings, CorpusSize, floorToHour, generateCorpus } from './corpus';
import { buildMetagraph, generateIdentities, writeMetagraphFile } from './metagraph';
import {
  CallCounts,
  CallerStanding,
  MinerServer,
  ReceivedCall,
  RequestCounts,
} from './miner-server';
import { writeSampleRepoNames } from './repo-names-file';

/**
 * The simulated subnet 13: one loopback axon per miner, each with its own sr25519 hotkey,
 * checking every call as bittensor's axon does and serving one synthetic corpus, plus the
 * metagraph file describing them. Used by tests, benchmarks and `npm start`.
 */

export interface MinerSpec {
  behaviour?: MinerBehaviour;
}

export interface DevnetOptions {
  /** How many honest miners, or one spec per miner (uids follow the array order). */
  miners: number | readonly MinerSpec[];
  /** Determines the corpus, keys, stakes and the faults' random draws. Default 1. */
  seed?: number;
  /** The corpus spans the 30 days before it. Default: the clock's time floored to the hour. */
  now?: Date;
  /**
   * The gateways' CLOCK_SIMULATION, when they run one (common/clock/clock-simulation.ts): the
   * devnet keeps its time (nonce freshness, call windows, the request log; before
   * `advanceClock`), and scales the nonce window by its rate, since a request's transit does
   * not speed up with the clock. Default: the real time.
   */
  simulation?: ClockSimulation;
  /** Loopback only. Default 127.0.0.1. */
  host?: string;
  /** 0 (default): ephemeral ports; otherwise miner i listens on basePort + i. */
  basePort?: number;
  /** When given, the metagraph is written there (atomically). */
  metagraphFile?: string;
  /**
   * When given, a sample validation file of miner repositories (list_repo_names) is written there.
   */
  repoNamesFile?: string;
  /** Validator entries without an axon, after the miners in uid order. Default 2. */
  validators?: number;
  /**
   * Hotkeys of validators outside the devnet (the gateway's), listed after the devnet's own
   * with a validator permit and stake, so that the miners take their calls.
   */
  validatorHotkeys?: readonly string[];
  corpusSize?: CorpusSize;
  /**
   * Every miner answers 404 to OnDemandRequest whatever its behaviour, as public subnet 13
   * miners do since December 2025: only stored data (GetContentsByBuckets, GetDataEntityBucket).
   */
  storedOnly?: boolean;
}

export interface DevnetMiner {
  readonly uid: number;
  readonly hotkey: string;
  readonly coldkey: string;
  readonly url: string;
  /** The current behaviour (changes with setBehaviour). */
  readonly behaviour: MinerBehaviour;
}

export interface DevnetCorpus {
  readonly seed: number;
  readonly now: Date;
  /** Everything any miner holds. */
  readonly items: readonly DataItem[];
  /** What the miner holds, in corpus order. */
  holdingsOf(uid: number): readonly DataItem[];
  /** The uids of the miners holding the item. */
  holdersOf(uri: string): readonly number[];
}

export interface Devnet {
  readonly miners: readonly DevnetMiner[];
  readonly validators: readonly MetagraphNeuron[];
  readonly metagraph: MetagraphFile;
  /** Absolute path of the metagraph file, or null when none was written. */
  readonly metagraphFile: string | null;
  /** Absolute path of the sample repository names file, or null when none was written. */
  readonly repoNamesFile: string | null;
  readonly corpus: DevnetCorpus;
  /** Every miner answers 404 to OnDemandRequest (DevnetOptions.storedOnly). */
  readonly storedOnly: boolean;
  setBehaviour(uid: number, behaviour: MinerBehaviour): void;
  /** Calls received per synapse since the start or the last reset (including refused ones). */
  requestCounts(uid: number): RequestCounts;
  /** Per synapse, calls received and calls refused with 403, since the start or the last reset. */
  callCounts(uid: number): CallCounts;
  /** Forgets the calls received so far, by one miner or by all (the call limits go on). */
  resetCounts(uid?: number): void;
  /** Every call the miner received, with caller, status and time (on the devnet clock). */
  calls(uid: number): readonly ReceivedCall[];
  /** Moves the devnet's clock (nonce freshness, call windows) forward. */
  advanceClock(ms: number): void;
  /** Closes every server and connection; nothing keeps the process alive afterwards. */
  stop(): Promise<void>;
}

const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '::1']);

export function isLoopbackHost(host: string): boolean {
  return LOOPBACK_HOSTS.has(host);
}

/**
 * The highest base port for this many miners: miner i listens on basePort + i, and the devnet
 * opens no other port (its metagraph is a file), so the last miner takes 65535 at most.
 */
export function maxBasePort(miners: number): number {
  return Math.min(65_535, 65_536 - miners);
}

export async function startDevnet(options: DevnetOptions): Promise<Devnet> {
  const seed = options.seed ?? 1;
  const host = options.host ?? '127.0.0.1';
  const basePort = options.basePort ?? 0;
  if (!isLoopbackHost(host)) throw new Error(`devnet miners bind to loopback only, not ${host}`);
  const specs: readonly MinerSpec[] =
    typeof options.miners === 'number'
      ? Array.from({ length: options.miners }, () => ({}))
      : options.miners;
  const highest = maxBasePort(specs.length);
  if (!Number.isInteger(basePort) || basePort < 0 || basePort > highest) {
    throw new Error(
      `base port must be an integer between 0 and ${highest} for ${specs.length} miners, got ${basePort}`,
    );
  }
  await cryptoReady();
  // The gateway's own clock: simulated time when it runs one, moved on by `advanceClock`.
  const devnetClock = new Clock(options.simulation);
  const clock = (): number => devnetClock.now().getTime();
  const corpus = generateCorpus({
    seed,
    now: options.now ?? floorToHour(devnetClock.now()),
    size: options.corpusSize,
  });
  const holdings = assignHoldings(corpus, specs.length).map((indexes) =>
    indexes.map((index) => corpus.items[index]),
  );
  const identities = generateIdentities(seed, specs.length, options.validators ?? 2);
  // What every miner knows of its callers: the metagraph, filled in once it is built.
  const standings = new Map<string, CallerStanding>();

  const servers = specs.map(
    (spec, uid) =>
      new MinerServer({
        uid,
        hotkey: identities[uid].hotkey,
        seed,
        now: corpus.now,
        items: holdings[uid],
        templates: corpus.items,
        behaviour: spec.behaviour,
        storedOnly: options.storedOnly,
        standing: (hotkey) => standings.get(hotkey),
        clock,
        clockRate: options.simulation?.rate,
      }),
  );
  const urls = new Map<number, string>();
  try {
    for (const server of servers) {
      urls.set(server.uid, await server.listen(host, basePort === 0 ? 0 : basePort + server.uid));
    }
  } catch (error) {
    await Promise.all(servers.map((server) => server.stop()));
    throw error;
  }

  const metagraph = buildMetagraph(identities, urls, new Date(), options.validatorHotkeys);
  for (const neuron of metagraph.neurons)
    standings.set(neuron.hotkey, {
      validatorPermit: neuron.validator_permit,
      stake: neuron.stake,
    });
  const metagraphFile = options.metagraphFile ? resolve(options.metagraphFile) : null;
  const repoNamesFile = options.repoNamesFile ? resolve(options.repoNamesFile) : null;
  if (metagraphFile || repoNamesFile) {
    try {
      if (metagraphFile) await writeMetagraphFile(metagraphFile, metagraph);
      if (repoNamesFile) await writeSampleRepoNames(repoNamesFile);
    } catch (error) {
      await Promise.all(servers.map((server) => server.stop()));
      throw error;
    }
  }

  const serverOf = (uid: number): MinerServer => {
    const server = servers[uid];
    if (!server) throw new Error(`no devnet miner with uid ${uid}`);
    return server;
  };
  const miners: DevnetMiner[] = servers.map((server) => ({
    uid: server.uid,
    hotkey: identities[server.uid].hotkey,
    coldkey: identities[server.uid].coldkey,
    url: server.url,
    get behaviour(): MinerBehaviour {
      return server.behaviour;
    },
  }));

  let holders: Map<string, number[]> | undefined;
  return {
    miners,
    validators: metagraph.neurons.filter((neuron) => neuron.validator_permit),
    metagraph,
    metagraphFile,
    repoNamesFile,
    corpus: {
      seed,
      now: corpus.now,
      items: corpus.items,
      holdingsOf: (uid) => {
        serverOf(uid);
        return holdings[uid];
      },
      holdersOf: (uri) => {
        holders ??= indexHolders(holdings);
        return holders.get(uri) ?? [];
      },
    },
    storedOnly: options.storedOnly === true,
    setBehaviour: (uid, behaviour) => serverOf(uid).setBehaviour(behaviour),
    requestCounts: (uid) => serverOf(uid).requestCounts(),
    callCounts: (uid) => serverOf(uid).callCounts(),
    resetCounts: (uid) => {
      for (const server of uid === undefined ? servers : [serverOf(uid)]) server.resetCounts();
    },
    calls: (uid) => serverOf(uid).calls(),
    advanceClock: (ms) => {
      devnetClock.advance(ms);
    },
    stop: async () => {
      await Promise.all(servers.map((server) => server.stop()));
    },
  };
}

function indexHolders(holdings: readonly (readonly DataItem[])[]): Map<string, number[]> {
  const holders = new Map<string, number[]>();
  holdings.forEach((items, uid) => {
    for (const item of items) {
      const list = holders.get(item.uri) ?? [];
      list.push(uid);
      holders.set(item.uri, list);
    }
  });
  return holders;
}

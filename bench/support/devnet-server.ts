import { ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { callAxon } from '../../src/devnet/axon-client';
import { MinerBehaviour } from '../../src/devnet/behaviour';
import { CorpusSize } from '../../src/devnet/corpus';
import { startDevnet } from '../../src/devnet/devnet';
import { CallCounts, RequestCounts } from '../../src/devnet/miner-server';
import { Sr25519Keypair } from '../../src/network/bittensor/keypair';
import { MetagraphFile } from '../../src/network/protocol';
import { OnDemandRequestFields, readEntityList } from '../../src/network/sn13/messages';
import { announceReady, ChildServer, forkServer } from './child-server';
import { runPool } from './measure';

/** What a devnet child starts, passed to it as JSON in BENCH_DEVNET. */
interface DevnetSpec {
  behaviours: MinerBehaviour[];
  metagraphFile: string;
  /** Validators outside the devnet whose calls its miners take (the benchmarked service's). */
  validatorHotkeys: string[];
  /** Every miner answers 404 to OnDemandRequest (only stored data is served). */
  storedOnly?: boolean;
  /** The corpus the miners share; default the devnet's (3,000 X posts, 2,000 Reddit items). */
  corpusSize?: CorpusSize;
}

/** What a devnet child may start beside its miners' behaviours. */
export type DevnetExtras = Pick<DevnetSpec, 'storedOnly' | 'corpusSize'>;

/** One devnet miner as a caller needs it. */
export interface DevnetAxon {
  url: string;
  hotkey: string;
}

export interface DevnetChild extends ChildServer {
  /** The metagraph file the child wrote (in a temporary directory that stop() removes). */
  metagraphFile: string;
  /** Miner axons (URL and hotkey) by uid, read from that file. */
  axons: DevnetAxon[];
  /** Calls each miner (by uid) received so far, asked of the child over IPC. */
  requestCounts(): Promise<RequestCounts[]>;
  /** Per synapse, calls each miner (by uid) received and refused with 403 so far. */
  callCounts(): Promise<CallCounts[]>;
}

/**
 * Runs a devnet (one miner per behaviour) in a child process forked from `script` with `flag`
 * (whose child side calls `serveDevnet`). Miners cost CPU per call (matching, JSON): in the
 * parent they would share, and skew, the event loop of the load generator timing requests.
 */
export async function forkDevnet(
  script: string,
  flag: string,
  behaviours: MinerBehaviour[],
  validatorHotkeys: string[],
  extras: DevnetExtras = {},
): Promise<DevnetChild> {
  const directory = mkdtempSync(join(tmpdir(), 'bench-devnet-'));
  const removeDirectory = (): void => rmSync(directory, { recursive: true, force: true });
  try {
    const metagraphFile = join(directory, 'metagraph.json');
    const spec: DevnetSpec = { behaviours, metagraphFile, validatorHotkeys, ...extras };
    const env = { ...process.env, BENCH_DEVNET: JSON.stringify(spec) };
    const server = await forkServer(script, [flag], env, 30_000);
    try {
      const { neurons } = JSON.parse(readFileSync(metagraphFile, 'utf8')) as MetagraphFile;
      const axons = behaviours.map((_, uid) => {
        const neuron = neurons.find((candidate) => candidate.uid === uid);
        if (!neuron?.axon_url) throw new Error(`devnet: no axon for miner ${uid}`);
        return { url: neuron.axon_url, hotkey: neuron.hotkey };
      });
      const requestCounts = () => ask<RequestCounts[]>(server.child, 'counts');
      const callCounts = () => ask<CallCounts[]>(server.child, 'call-counts');
      const stop = (): Promise<void> => server.stop().finally(removeDirectory);
      return { ...server, metagraphFile, axons, requestCounts, callCounts, stop };
    } catch (error) {
      await server.stop();
      throw error;
    }
  } catch (error) {
    removeDirectory();
    throw error;
  }
}

/** Asks the child for `question` (`counts`, `call-counts`); its answer carries that key. */
function ask<T>(child: ChildProcess, question: 'counts' | 'call-counts'): Promise<T> {
  return new Promise((resolve) => {
    const onMessage = (message: unknown): void => {
      if (typeof message !== 'object' || message === null || !(question in message)) return;
      child.off('message', onMessage);
      resolve((message as Record<string, unknown>)[question] as T);
    };
    child.on('message', onMessage);
    child.send(question);
  });
}

/** Child side of `forkDevnet`: starts the devnet and reports the first miner's port. */
export async function serveDevnet(): Promise<void> {
  const spec = JSON.parse(process.env.BENCH_DEVNET ?? '') as DevnetSpec;
  const miners = spec.behaviours.map((behaviour) => ({ behaviour }));
  const devnet = await startDevnet({
    miners,
    metagraphFile: spec.metagraphFile,
    validatorHotkeys: spec.validatorHotkeys,
    storedOnly: spec.storedOnly,
    corpusSize: spec.corpusSize,
  });
  // stop() also ends the hung requests, which would otherwise hold the gateway's sockets.
  process.once('SIGTERM', () => void devnet.stop().finally(() => process.exit(0)));
  process.on('message', (message) => {
    if (message === 'counts')
      process.send?.({ counts: devnet.miners.map(({ uid }) => devnet.requestCounts(uid)) });
    if (message === 'call-counts')
      process.send?.({ 'call-counts': devnet.miners.map(({ uid }) => devnet.callCounts(uid)) });
  });
  announceReady(Number(new URL(devnet.miners[0].url).port));
}

/**
 * A zero-overhead gateway: `count` fan-outs of `request(index)` straight to every axon, signed
 * by `signer`, `concurrency` at a time, each timed until `quorum` miners have answered
 * (stragglers run on, as the gateway's do). What the miners allow at this load, before any
 * gateway work.
 */
export async function timeQuorum(
  axons: readonly DevnetAxon[],
  signer: Sr25519Keypair,
  request: (index: number) => OnDemandRequestFields,
  plan: { quorum: number; count: number; concurrency: number },
): Promise<{ times: number[]; seconds: number }> {
  const times: number[] = [];
  const stragglers: Promise<unknown>[] = [];
  const start = performance.now();
  await runPool(plan.count, plan.concurrency, async (index) => {
    const started = performance.now();
    let answered = 0;
    await new Promise<void>((resolve, reject) => {
      for (const axon of axons) {
        const call = callMiner(axon, signer, request(index));
        stragglers.push(call.then(() => ++answered === plan.quorum && resolve(), reject));
      }
    });
    times.push(performance.now() - started);
  });
  const seconds = (performance.now() - start) / 1000;
  await Promise.all(stragglers);
  return { times, seconds };
}

/**
 * Times direct calls to one miner, one at a time, while `more(timed)` holds: its latency as a
 * client sees it. The first `untimed` calls (connection, JIT) are made but not recorded.
 */
export async function timeMinerCalls(
  axon: DevnetAxon,
  signer: Sr25519Keypair,
  request: (index: number) => OnDemandRequestFields,
  more: (timed: number) => boolean,
  untimed = 0,
): Promise<number[]> {
  const times: number[] = [];
  for (let index = 0; more(times.length); index += 1) {
    const ms = await callMiner(axon, signer, request(index));
    if (index >= untimed) times.push(ms);
  }
  return times;
}

/**
 * One signed `POST /OnDemandRequest`, the answer read and its entity list taken as the gateway
 * does; returns ms. Signing and reading cost the same as in the gateway.
 */
async function callMiner(axon: DevnetAxon, signer: Sr25519Keypair, fields: OnDemandRequestFields) {
  const started = performance.now();
  const answer = await callAxon({
    ...axon,
    synapse: 'OnDemandRequest',
    fields: { ...fields },
    signer,
    timeoutSeconds: 10,
  });
  if (answer.status !== 200) throw new Error(`${axon.url}: ${answer.status} ${answer.text}`);
  readEntityList(answer.body, 'data');
  return performance.now() - started;
}

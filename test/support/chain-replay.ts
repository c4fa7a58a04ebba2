import { readFileSync } from 'node:fs';
import { AddressInfo } from 'node:net';
import { WebSocket, WebSocketServer } from 'ws';
import { fixturePath } from './bittensor-fixtures';
import { ChainBasics, ChainExtrinsics, ExtrinsicsStandIn } from './chain-extrinsics';
import { CommitmentStorage, Usage } from './commitment-storage';

/**
 * A subtensor node on 127.0.0.1 that answers the recorded finney calls
 * (`finney-netuid1-recorded-rpc.json`, section `metagraph`: netuid 1 at block 6,852,690) and
 * the bookkeeping calls a client makes while connecting. Runtime calls that were not recorded
 * get an error, as a node of another runtime would answer them.
 *
 * `mode` switches the node's behaviour while it runs: `silent` takes calls and never answers,
 * `garbage` answers every runtime call with bytes that decode to nothing, `empty` answers every
 * runtime call with an empty list (a subnet without neurons).
 *
 * Storage reads (`state_getStorage`, `state_getKeysPaged`, `state_getKeys`,
 * `state_queryStorageAt`) answer what the test put there: `Commitments.CommitmentOf` entries,
 * through `setCommitment`, `Commitments.UsedSpaceOf` and `SubtensorModule.Tempo`, and the head's
 * `System.Number` (./commitment-storage.ts). Any other key reads as absent.
 */
export type ReplayMode = 'answer' | 'silent' | 'garbage' | 'empty';

export interface ChainReplay {
  url: string;
  /** Every method called, in order (bookkeeping included). */
  readonly calls: string[];
  /** The runtime API calls made (`NeuronInfoRuntimeApi_get_neurons_lite`, …), in order. */
  readonly runtimeCalls: string[];
  mode: ReplayMode;
  /**
   * Called with each method as it arrives, before it is answered (a test can switch `mode`
   * there: a node that answers the set-up of a connection and then goes silent).
   */
  onCall?: (method: string) => void;
  /**
   * Runtime methods answered with an error whatever their arguments, as a node without them
   * answers.
   */
  readonly refusedCalls: Set<string>;
  /**
   * Runtime methods answered with this result (SCALE hex) whatever their arguments: an answer of
   * another runtime than the recorded one.
   */
  readonly answeredCalls: Map<string, string>;
  /**
   * Signed extrinsics: what was submitted, and how the next ones are answered. A successful
   * `set_commitment` is stored as setCommitment stores one: read back through CommitmentOf.
   */
  readonly extrinsics: ChainExtrinsics;
  /**
   * Makes `hotkey`'s commitment under `netuid` the text `sha40` as one `Raw<length>` item (a
   * real SHA: `Raw40`), made at `block`, as `Commitments.set_commitment` leaves it.
   */
  setCommitment(netuid: number, hotkey: string, sha40: string, block: number): void;
  /** As setCommitment with any `info.fields` (`[{ Sha256: '0x…' }]`, two items, none). */
  setCommitmentFields(netuid: number, hotkey: string, fields: unknown[], block: number): void;
  clearCommitment(netuid: number, hotkey: string): void;
  /**
   * `hotkey`'s `Commitments.UsedSpaceOf(netuid)`: the space it used in epoch `lastEpoch`
   * (undefined: none), as the space rule of `set_commitment` counts it (chain-extrinsics.ts).
   */
  setUsedSpace(netuid: number, hotkey: string, usage: Usage | undefined): void;
  /** `SubtensorModule.Tempo(netuid)`: the subnet's epochs are `tempo + 1` blocks. */
  setTempo(netuid: number, tempo: number): void;
  /** Drops every open connection (the node restarts; clients reconnect). */
  dropConnections(): void;
  /**
   * A runtime upgrade to `specVersion`: told to every runtime-version subscription of the open
   * connections, as a node tells it, and answered by `state_getRuntimeVersion` from then on.
   */
  upgradeRuntime(specVersion: number): void;
  stop(): Promise<void>;
}

interface Recording {
  metagraph: Record<string, Record<string, { result: unknown }>>;
  neurons_lite: Record<string, Record<string, { result: unknown }>>;
}

interface RpcRequest {
  id: number | string;
  method: string;
  params?: unknown[];
}

/** Finney's genesis block hash (the recording does not ask for it; clients do). */
const FINNEY_GENESIS = '0x2f0555cc76fc2840a25a6ea3b9637146806f1f44b090c175ffde2a7e5ab36c03';

export async function startChainReplay(): Promise<ChainReplay> {
  const recording = JSON.parse(
    readFileSync(fixturePath('finney-netuid1-recorded-rpc.json'), 'utf8'),
  ) as Recording;
  const metadataV14 = readFileSync(fixturePath('finney-metadata-v14.hex'), 'utf8').trim();
  const metadataV15 = readFileSync(fixturePath('finney-metadata-v15.hex'), 'utf8').trim();
  const recorded = recording.metagraph;
  const head = only(recorded.chain_getHead).result as string;
  const header = only(recorded.chain_getHeader).result;
  let runtimeVersion = only(recorded.state_getRuntimeVersion).result as Record<string, unknown>;
  /** Each open runtime-version subscription, to tell an upgrade to. */
  const runtimeSubscriptions = new Map<string, WebSocket>();
  const rpcMethods = only(recording.neurons_lite.rpc_methods).result;

  // state_call answers by runtime method and argument bytes (hex without 0x).
  const runtimeAnswers = new Map<string, string>();
  for (const [params, answer] of Object.entries(recorded.state_call)) {
    const [method, data] = JSON.parse(params) as [string, string];
    runtimeAnswers.set(`${method}:${stripHex(data)}`, answer.result as string);
  }
  runtimeAnswers.set('Metadata_metadata_versions:', '0x080e0000000f000000');
  runtimeAnswers.set('Metadata_metadata_at_version:0f000000', metadataV15);

  const storage = new CommitmentStorage(metadataV14);

  const server = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  const calls: string[] = [];
  const runtimeCalls: string[] = [];
  let subscriptions = 0;
  const extrinsics = new ExtrinsicsStandIn(
    {
      metadataV14,
      genesisHash: FINNEY_GENESIS,
      head,
      header: header as ChainBasics['header'],
      runtimeVersion: runtimeVersion as ChainBasics['runtimeVersion'],
    },
    storage,
  );

  const replay: ChainReplay = {
    url: `ws://127.0.0.1:${(server.address() as AddressInfo).port}`,
    calls,
    runtimeCalls,
    mode: 'answer',
    refusedCalls: new Set(),
    answeredCalls: new Map(),
    extrinsics,
    setCommitment: (netuid, hotkey, sha40, block) =>
      storage.setCommitment(netuid, hotkey, sha40, block),
    setCommitmentFields: (netuid, hotkey, fields, block) =>
      storage.setFields(netuid, hotkey, fields, block),
    clearCommitment: (netuid, hotkey) => storage.clear(netuid, hotkey),
    setUsedSpace: (netuid, hotkey, usage) => storage.setUsedSpace(netuid, hotkey, usage),
    setTempo: (netuid, tempo) => storage.setTempo(netuid, tempo),
    dropConnections: () => server.clients.forEach((client) => client.terminate()),
    upgradeRuntime: (specVersion) => {
      runtimeVersion = { ...runtimeVersion, specVersion };
      for (const [id, socket] of runtimeSubscriptions)
        if (socket.readyState === socket.OPEN)
          socket.send(
            JSON.stringify({
              jsonrpc: '2.0',
              method: 'state_runtimeVersion',
              params: { subscription: id, result: runtimeVersion },
            }),
          );
    },
    stop: async () => {
      server.clients.forEach((client) => client.terminate());
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };

  function answer(request: RpcRequest): { result: unknown } | { error: unknown } {
    const params = request.params ?? [];
    switch (request.method) {
      case 'rpc_methods':
        return { result: rpcMethods };
      case 'system_chain':
        return { result: 'Bittensor' };
      case 'system_name':
        return { result: 'Subtensor Node' };
      case 'system_version':
        return { result: '4.0.0-dev' };
      case 'system_properties':
        return { result: { ss58Format: 42, tokenDecimals: 9, tokenSymbol: 'TAO' } };
      case 'system_health':
        return { result: { peers: 8, isSyncing: false, shouldHavePeers: true } };
      case 'chain_getBlockHash':
        return { result: params[0] === 0 ? FINNEY_GENESIS : head };
      case 'chain_getHead':
      case 'chain_getFinalizedHead':
        return { result: head };
      case 'chain_getHeader':
        return { result: header };
      case 'state_getRuntimeVersion':
        return { result: runtimeVersion };
      case 'state_getMetadata':
        return { result: metadataV14 };
      case 'state_call':
        return runtimeCall(String(params[0]), String((params[1] as string) ?? ''));
      case 'state_getStorage':
      case 'state_getStorageAt':
        return { result: storage.value(String(params[0])) };
      case 'state_getKeysPaged':
      case 'state_getKeysPagedAt':
        return {
          result: storage.keys(String(params[0]), Number(params[1]), params[2] as string | null),
        };
      case 'state_getKeys':
        return { result: storage.keys(String(params[0]), Infinity, null) };
      case 'state_queryStorageAt':
        return {
          result: [
            {
              block: head,
              changes: (params[0] as string[]).map((key) => [key, storage.value(key)]),
            },
          ],
        };
      default:
        return { error: { code: -32601, message: `Method not found: ${request.method}` } };
    }
  }

  function runtimeCall(method: string, data: string): { result: unknown } | { error: unknown } {
    if (!method.startsWith('Metadata_')) runtimeCalls.push(method);
    if (replay.mode === 'garbage' && !method.startsWith('Metadata_'))
      return { result: '0x01ffffffff0badc0de' };
    if (replay.mode === 'empty' && !method.startsWith('Metadata_')) return { result: '0x00' };
    const result = replay.refusedCalls.has(method)
      ? undefined
      : (replay.answeredCalls.get(method) ?? runtimeAnswers.get(`${method}:${stripHex(data)}`));
    if (result === undefined)
      return { error: { code: 1002, message: `Execution failed: ${method} not recorded` } };
    return { result };
  }

  function subscribe(socket: WebSocket, request: RpcRequest): void {
    const id = `sub${++subscriptions}`;
    socket.send(JSON.stringify({ jsonrpc: '2.0', id: request.id, result: id }));
    // One notification, as a node sends the current value at once.
    const value = request.method.includes('RuntimeVersion') ? runtimeVersion : header;
    if (request.method.includes('RuntimeVersion')) runtimeSubscriptions.set(id, socket);
    socket.send(
      JSON.stringify({
        jsonrpc: '2.0',
        method: notificationMethod(request.method),
        params: { subscription: id, result: value },
      }),
    );
  }

  server.on('connection', (socket) => {
    socket.on('message', (data: Buffer) => {
      let request: RpcRequest;
      try {
        request = JSON.parse(data.toString('utf8')) as RpcRequest;
      } catch {
        return;
      }
      calls.push(request.method);
      replay.onCall?.(request.method);
      if (replay.mode === 'silent') return;
      if (extrinsics.handle(request, (message) => socket.send(JSON.stringify(message)))) return;
      if (/_subscribe/.test(request.method)) return subscribe(socket, request);
      if (/_unsubscribe/.test(request.method)) {
        socket.send(JSON.stringify({ jsonrpc: '2.0', id: request.id, result: true }));
        return;
      }
      socket.send(JSON.stringify({ jsonrpc: '2.0', id: request.id, ...answer(request) }));
    });
  });
  return replay;
}

/** The notification a subscription method sends (as substrate names them). */
function notificationMethod(method: string): string {
  const names: Record<string, string> = {
    state_subscribeRuntimeVersion: 'state_runtimeVersion',
    chain_subscribeNewHeads: 'chain_newHead',
    chain_subscribeFinalizedHeads: 'chain_finalizedHead',
    chain_subscribeAllHeads: 'chain_allHead',
  };
  return names[method] ?? method;
}

function only<T>(answers: Record<string, T>): T {
  return Object.values(answers)[0];
}

function stripHex(hex: string): string {
  return hex.replace(/^0x/, '').toLowerCase();
}

import type { ApiPromise } from '@polkadot/api';
import { setImmediate } from 'node:timers/promises';
import { Logger, LoggerService } from '@nestjs/common';
import { loadWhenUsed } from '../../common/load-when-used';
import { retryDelay } from '../../common/retry-delay';
import { within } from '../../common/within';
import { clientErrorText } from './client-error-text';
import { nodeAddress, urlsAsAddresses } from '../../common/security/node-address';
import { routePolkadotConsole } from './polkadot-console';
import { QUIET_RPC, SUBTENSOR_EXTENSIONS } from './subtensor-definitions';

/** The node cannot be used now: down, refusing, too slow, or waiting out a reconnect backoff. */
export class ChainUnavailableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ChainUnavailableError';
  }
}

class ConnectionLostError extends ChainUnavailableError {}

/** How long dropping a connection waits for its socket to close. */
const CLOSE_WAIT_MS = 2000;

/**
 * A failed connect waits 1 s before the next attempt, then twice as long after each failure, at
 * most a minute (retryDelay, as the other background retries). No jitter: one connection per
 * replica to the operator's own node, and a wait the log line can state exactly
 * (docs/decisions.md, "The metagraph from the chain").
 */
const RECONNECT_FIRST_MS = 1000;
const RECONNECT_MAX_MS = 60_000;

/**
 * Which chain a connection reached, read as it connects: operators see a testnet or a local
 * node given as SUBTENSOR_URL at once (finney's genesis is `0x2f0555cc…`).
 */
export interface ChainIdentity {
  /**
   * The node's `system_chain` (`Bittensor` on finney), up to 256 characters; null when it
   * answered an empty name.
   */
  chain: string | null;
  /** The hash of block 0, as 0x-prefixed hex. */
  genesisHash: string;
  /** The node's best block when the connection was made; null when its header was not read. */
  bestBlock: number | null;
}

/** A node names its chain as it likes: no more than this is kept. */
const CHAIN_NAME_MAX = 256;

/** What the connection logs: a line per new connection (Nest's Logger, so pino's JSON). */
export type ConnectionLogger = Pick<LoggerService, 'log' | 'warn'>;

/**
 * One websocket connection to a subtensor node through @polkadot/api, opened on first use. A
 * node that drops the connection, refuses it or stops answering is let go; the next use
 * reconnects, but not before a backoff that grows with each failed attempt. Every use is
 * bounded by one deadline, `timeoutMs` from the call, connecting and identifying the chain
 * included (a use that connects by `connectTimeoutMs` if longer: the same unless given), so a
 * stuck node never holds a caller, and every failure of a use is a ChainUnavailableError.
 */
export class SubtensorConnection {
  private api: ApiPromise | undefined;
  private connecting: Promise<ApiPromise> | undefined;
  private retryAt = 0;
  private failedAttempts = 0;
  /** Why the latest attempt to connect failed (redacted): a use waiting out the backoff says it. */
  private lastConnectError = '';
  private closed = false;
  /** Each connection under way, given up when closed rather than waited out (untilClosed). */
  private readonly onClose = new Set<() => void>();
  private lastIdentity: ChainIdentity | undefined;
  /** The runtime's spec version when the open connection was made (runtimeChanged). */
  private connectedSpec: number | undefined;

  constructor(
    readonly url: string,
    private readonly timeoutMs: number,
    private readonly logger: ConnectionLogger = new Logger(SubtensorConnection.name),
    private readonly connectTimeoutMs = timeoutMs,
  ) {}

  /** The node's scheme and host, for logs: the URL may carry credentials. */
  get address(): string {
    return nodeAddress(this.url);
  }

  /** The chain of the latest connection made (kept while reconnecting); undefined before one. */
  get identity(): ChainIdentity | undefined {
    return this.lastIdentity;
  }

  /** Whether a connection is open now (it is opened on first use, and kept between uses). */
  get isConnected(): boolean {
    return this.api?.isConnected ?? false;
  }

  /**
   * Runs `read` against the node. Throws ChainUnavailableError when the node cannot be used, for
   * whatever reason (no answer, an error answered, the connection lost). One deadline,
   * `timeoutMs` from the call, bounds it all: connecting, identifying the chain, the read, and
   * the read made again on a new connection when the connection dropped under the first.
   */
  async use<T>(read: (api: ApiPromise) => Promise<T>): Promise<T> {
    const deadline = this.deadlineOf(this.timeoutMs);
    try {
      return await this.useOnce(read, deadline);
    } catch (error) {
      if (!(error instanceof ConnectionLostError)) throw error;
      return this.useOnce(read, deadline);
    }
  }

  /**
   * Runs `work` once, bounded by `timeoutMs` instead of the connection's own bound: for work
   * that waits on the chain rather than on the node (an extrinsic's inclusion in a block), and
   * that must not be repeated on a new connection when the connection drops.
   */
  async useLong<T>(work: (api: ApiPromise) => Promise<T>, timeoutMs: number): Promise<T> {
    return this.useOnce(work, this.deadlineOf(timeoutMs), 'passed');
  }

  /**
   * When a use started now must be done: `bound` from now, or `connectTimeoutMs` from now if that
   * is longer and the use has to connect first (a bound only tests set apart, so that a loaded
   * machine decodes the metadata in time).
   */
  private deadlineOf(bound: number): Deadline {
    const ms = this.api?.isConnected ? bound : Math.max(bound, this.connectTimeoutMs);
    return { at: performance.now() + ms, ms };
  }

  /**
   * `workErrors`: what becomes of an error of the work's own that is not the node's (neither no
   * answer nor a JSON-RPC error). A read's is the node's answer unreadable: unavailable. Long
   * work's is the chain's verdict on it (a dispatch error, the commitment rate limit), which its
   * caller tells apart: passed as it is.
   */
  private async useOnce<T>(
    read: (api: ApiPromise) => Promise<T>,
    deadline: Deadline,
    workErrors: 'unavailable' | 'passed' = 'unavailable',
  ): Promise<T> {
    const api = await this.connected(deadline);
    try {
      return await withTimeout(read(api), deadline, 'no answer');
    } catch (error) {
      if (!api.isConnected) {
        await this.drop(api);
        throw new ConnectionLostError(`connection lost: ${this.redacted(error)}`);
      }
      // A node that did not answer (our deadline, or the client's own "No response received
      // from RPC endpoint") may have a wedged socket, and one that answered an error has
      // nothing more to give now: either is let go, the next use connects again.
      if (error instanceof ChainUnavailableError || isNodeFailure(error)) {
        await this.drop(api);
        throw error instanceof ChainUnavailableError
          ? error
          : new ChainUnavailableError(this.redacted(error));
      }
      if (workErrors === 'passed') throw error;
      // What the node answered could not be read (garbage, a subnet it does not have).
      throw new ChainUnavailableError(this.redacted(error));
    }
  }

  /**
   * Whether the node's runtime was upgraded since the connection was made. The client then
   * reloads the metadata by `state_getMetadata` (V14), which has no runtime APIs: every read
   * failed on that connection (`Cannot read properties of undefined (reading 'getNeuronsLite')`)
   * until its socket happened to drop, the metagraph frozen meanwhile (a chain-faults audit;
   * finney upgrades every few weeks). A new connection reads V15, as the first did.
   */
  private runtimeChanged(api: ApiPromise): boolean {
    const spec = api.runtimeVersion.specVersion.toNumber();
    if (spec === this.connectedSpec) return false;
    this.logger.log(
      `subtensor ${this.address}: runtime upgraded from spec ${this.connectedSpec} to ${spec}; ` +
        'connecting again to read its metadata',
    );
    return true;
  }

  /**
   * `work`, or a ChainUnavailableError once closed. Its listener is removed as `work` settles:
   * raced against one promise that lived as long as the connection, each attempt left a
   * reaction on it that kept the attempt's client (its metadata and registry) reachable until
   * close: about 12 MB per reconnection, never freed (a chain-faults audit).
   */
  private untilClosed<T>(work: Promise<T>): Promise<T> {
    if (this.closed) {
      // Its failure is no one's to handle now, but is handled: unhandled, it ended the process.
      work.catch(() => undefined);
      return Promise.reject(new ChainUnavailableError('connection closed'));
    }
    return new Promise<T>((resolve, reject) => {
      const giveUp = () => reject(new ChainUnavailableError('connection closed'));
      this.onClose.add(giveUp);
      work.then(resolve, reject).finally(() => this.onClose.delete(giveUp));
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    // A node silent while connecting would otherwise hold the shutdown for its whole deadline
    // (since start-up no longer waits for the first read, docs/decisions.md, "The metagraph
    // from the chain").
    for (const giveUp of this.onClose) giveUp();
    this.onClose.clear();
    const api = this.api ?? (await this.connecting?.catch(() => undefined));
    if (api) await this.drop(api);
  }

  private async connected(deadline: Deadline): Promise<ApiPromise> {
    if (this.closed) throw new ChainUnavailableError('connection closed');
    if (this.api?.isConnected && !this.runtimeChanged(this.api)) return this.api;
    if (this.api) await this.drop(this.api);
    // Closed while the old connection closed (up to CLOSE_WAIT_MS): no new one (a review's
    // finding: one was opened after close, and its set-up's failure went unhandled).
    if (this.closed) throw new ChainUnavailableError('connection closed');
    const wait = this.retryAt - performance.now();
    if (wait > 0 && !this.connecting)
      throw new ChainUnavailableError(
        `${this.lastConnectError}; reconnecting in ${Math.ceil(wait / 1000)} s ` +
          `(${this.failedAttempts} failed attempts)`,
      );
    this.connecting ??= this.connect({
      at: Math.min(deadline.at, performance.now() + this.connectTimeoutMs),
      ms: Math.min(deadline.ms, this.connectTimeoutMs),
    }).finally(() => (this.connecting = undefined));
    // A use that joins a connection under way waits no longer than its own deadline.
    return withTimeout(this.connecting, deadline, 'could not connect');
  }

  /** Connects and identifies the chain, all by `deadline`; a node silent meanwhile fails it. */
  private async connect(deadline: Deadline): Promise<ApiPromise> {
    // autoConnectMs 0: reconnecting is ours to pace (the provider's own retries never back off).
    // No result cache: each read is of a new block, and answers are hundreds of kilobytes.
    // The provider's own per-request timeout is only a backstop behind our deadlines (it is
    // checked every 5 s, and its plain Error is mapped to ChainUnavailableError anyway).
    // Before the client is loaded: its modules may warn as they load (duplicate versions, …).
    routePolkadotConsole(this.url);
    const { ApiPromise, WsProvider } =
      loadWhenUsed<typeof import('@polkadot/api')>('@polkadot/api');
    const provider = new WsProvider(
      this.url,
      0,
      undefined,
      Math.max(this.timeoutMs, this.connectTimeoutMs),
      0,
    );
    let api: ApiPromise | undefined;
    try {
      await provider.connect();
      api = await withTimeout(
        this.untilClosed(
          ApiPromise.create({
            provider,
            noInitWarn: true,
            throwOnConnect: true,
            signedExtensions: SUBTENSOR_EXTENSIONS,
            rpc: QUIET_RPC,
          }),
        ),
        deadline,
        'could not connect',
      );
      // The spec the metadata was read for: read after identifying, an upgrade meanwhile was
      // taken for this connection's own and never noticed (a review's finding).
      this.connectedSpec = api.runtimeVersion.specVersion.toNumber();
      await this.untilClosed(this.identify(api, deadline));
      const connectedApi = api;
      provider.on('disconnected', () => void this.drop(connectedApi));
      this.api = api;
      this.failedAttempts = 0;
      this.retryAt = 0;
      return api;
    } catch (error) {
      if (api) await this.drop(api);
      await provider.disconnect().catch(() => undefined);
      this.failedAttempts += 1;
      this.retryAt =
        performance.now() +
        retryDelay(this.failedAttempts - 1, RECONNECT_FIRST_MS, RECONNECT_MAX_MS);
      const failure =
        error instanceof ChainUnavailableError
          ? error
          : new ChainUnavailableError(`could not connect: ${this.redacted(error)}`);
      this.lastConnectError = failure.message;
      throw failure;
    }
  }

  /**
   * The client names the node by the URL as given (`disconnected from wss://user:token@…`):
   * our errors, which reach the log and system-status, name it by its address only.
   */
  private redacted(error: unknown): string {
    return urlsAsAddresses(clientErrorText(error), [this.url]);
  }

  /**
   * Logs which chain the new connection reached: name, genesis, best block and the address
   * without credentials. A genesis other than the previous connection's is a warning: the
   * node behind SUBTENSOR_URL now serves another chain.
   */
  private async identify(api: ApiPromise, deadline: Deadline): Promise<void> {
    // A node that does not answer its header fails the connection (its socket answered set-up
    // only); one that answers an error is named without a best block.
    const bestBlock = await withTimeout(
      api.rpc.chain.getHeader().then(
        (header) => header.number.toNumber(),
        (error: unknown) => (isNoResponse(error) ? Promise.reject(error as Error) : null),
      ),
      deadline,
      'no header',
    );
    const before = this.lastIdentity;
    const identity: ChainIdentity = {
      chain: api.runtimeChain.toString().slice(0, CHAIN_NAME_MAX) || null,
      genesisHash: api.genesisHash.toHex(),
      bestBlock,
    };
    this.lastIdentity = identity;
    const line =
      `connected to subtensor ${this.address}: chain ${identity.chain ?? '(no name)'}, ` +
      `genesis ${identity.genesisHash}, best block ${bestBlock ?? 'unknown'}`;
    if (before && before.genesisHash !== identity.genesisHash)
      this.logger.warn(`${line}; the previous connection reached genesis ${before.genesisHash}`);
    else this.logger.log(line);
  }

  /**
   * disconnect() only starts the close handshake: the socket closes later, and then the client
   * fails (and logs) what was still subscribed. Waiting for that (bounded) means nothing of a
   * dropped connection still runs once drop returns: no late work after shutdown or a test.
   */
  private async drop(api: ApiPromise): Promise<void> {
    if (this.api === api) this.api = undefined;
    const closed = api.isConnected
      ? new Promise<void>((resolve) => api.once('disconnected', () => resolve()))
      : Promise.resolve();
    await api.disconnect().catch(() => undefined);
    await withTimeout(closed, CLOSE_WAIT_MS, 'close').catch(() => undefined);
    await setImmediate();
  }
}

/**
 * When a use must be done (performance.now(), as is the reconnect's backoff: a wall clock set
 * back would stretch both by as much; docs/decisions.md, "Clocks"), and the bound it was given,
 * for the error's message.
 */
interface Deadline {
  at: number;
  ms: number;
}

/** @polkadot/rpc-provider's own timeout: `No response received from RPC endpoint in 30s`. */
function isNoResponse(error: unknown): boolean {
  return error instanceof Error && error.message.startsWith('No response received from RPC');
}

/**
 * The node did not answer, or answered a JSON-RPC error (`-32009: Server is busy`, a rate limit):
 * @polkadot/rpc-provider's RpcError carries the error's numeric code.
 */
function isNodeFailure(error: unknown): boolean {
  return isNoResponse(error) || typeof (error as { code?: unknown } | null)?.code === 'number';
}

/** The work's value, or ChainUnavailableError "<what> within <ms> ms" once the deadline passed. */
function withTimeout<T>(work: Promise<T>, deadline: Deadline | number, what: string): Promise<T> {
  const { at, ms } =
    typeof deadline === 'number' ? { at: performance.now() + deadline, ms: deadline } : deadline;
  return within(
    work,
    Math.max(0, at - performance.now()),
    () => new ChainUnavailableError(`${what} within ${ms} ms`),
  );
}

import type { ApiPromise } from '@polkadot/api';
import { setImmediate } from 'node:timers/promises';
import { ExponentialBackoff, IBackoff } from 'cockatiel';
import { loadWhenUsed } from '../../common/load-when-used';

/** The node cannot be used now: down, refusing, too slow, or waiting out a reconnect backoff. */
export class ChainUnavailableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ChainUnavailableError';
  }
}

class ConnectionLostError extends ChainUnavailableError {}

/**
 * Subtensor's two transaction extensions carry no data: declared, so the client neither warns
 * about them nor mis-encodes extrinsics that include them.
 */
const SUBTENSOR_EXTENSIONS = {
  SubtensorTransactionExtension: { extrinsic: {}, payload: {} },
  DrandPriority: { extrinsic: {}, payload: {} },
};

/** Reconnect attempts wait 1 s, then about twice as long each time, up to a minute. */
/** How long dropping a connection waits for its socket to close. */
const CLOSE_WAIT_MS = 2000;

const RECONNECT_BACKOFF = new ExponentialBackoff({ initialDelay: 1000, maxDelay: 60_000 });

/**
 * One websocket connection to a subtensor node through @polkadot/api, opened on first use. A
 * node that drops the connection, refuses it or stops answering is let go; the next use
 * reconnects, but not before a backoff that grows with each failed attempt. Every use is
 * bounded by `timeoutMs`, connecting included (connecting by `connectTimeoutMs`, the same
 * unless given), so a stuck node never holds a caller.
 */
export class SubtensorConnection {
  private api: ApiPromise | undefined;
  private connecting: Promise<ApiPromise> | undefined;
  private backoff: IBackoff<unknown> | undefined;
  private retryAt = 0;
  private failedAttempts = 0;
  private closed = false;

  constructor(
    readonly url: string,
    private readonly timeoutMs: number,
    private readonly connectTimeoutMs = timeoutMs,
  ) {}

  /**
   * Runs `read` against the node. Throws ChainUnavailableError when the node cannot be used. A
   * read cut off by the connection dropping is tried once more on a new connection.
   */
  async use<T>(read: (api: ApiPromise) => Promise<T>): Promise<T> {
    try {
      return await this.useOnce(read, this.timeoutMs);
    } catch (error) {
      if (!(error instanceof ConnectionLostError)) throw error;
      return this.useOnce(read, this.timeoutMs);
    }
  }

  /**
   * Runs `work` once, bounded by `timeoutMs` instead of the connection's own bound: for work
   * that waits on the chain rather than on the node (an extrinsic's inclusion in a block), and
   * that must not be repeated on a new connection when the connection drops.
   */
  async useLong<T>(work: (api: ApiPromise) => Promise<T>, timeoutMs: number): Promise<T> {
    return this.useOnce(work, timeoutMs);
  }

  private async useOnce<T>(read: (api: ApiPromise) => Promise<T>, timeoutMs: number): Promise<T> {
    const api = await this.connected();
    try {
      return await withTimeout(read(api), timeoutMs, 'no answer');
    } catch (error) {
      // A node that stops answering mid-call is dropped: its socket may be wedged.
      if (error instanceof ChainUnavailableError) await this.drop(api);
      else if (!api.isConnected) {
        await this.drop(api);
        throw new ConnectionLostError(`connection lost: ${(error as Error).message}`);
      }
      throw error;
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    const api = this.api ?? (await this.connecting?.catch(() => undefined));
    if (api) await this.drop(api);
  }

  private async connected(): Promise<ApiPromise> {
    if (this.closed) throw new ChainUnavailableError('connection closed');
    if (this.api?.isConnected) return this.api;
    if (this.api) await this.drop(this.api);
    const wait = this.retryAt - Date.now();
    if (wait > 0 && !this.connecting)
      throw new ChainUnavailableError(
        `reconnecting in ${Math.ceil(wait / 1000)} s (${this.failedAttempts} failed attempts)`,
      );
    this.connecting ??= this.connect().finally(() => (this.connecting = undefined));
    return this.connecting;
  }

  private async connect(): Promise<ApiPromise> {
    // autoConnectMs 0: reconnecting is ours to pace (the provider's own retries never back off).
    // No result cache: each read is of a new block, and answers are hundreds of kilobytes.
    const { ApiPromise, WsProvider } =
      loadWhenUsed<typeof import('@polkadot/api')>('@polkadot/api');
    const provider = new WsProvider(this.url, 0, undefined, this.connectTimeoutMs, 0);
    try {
      await provider.connect();
      const api = await withTimeout(
        ApiPromise.create({
          provider,
          noInitWarn: true,
          throwOnConnect: true,
          signedExtensions: SUBTENSOR_EXTENSIONS,
        }),
        this.connectTimeoutMs,
        'could not connect',
      );
      provider.on('disconnected', () => void this.drop(api));
      this.api = api;
      this.backoff = undefined;
      this.failedAttempts = 0;
      this.retryAt = 0;
      return api;
    } catch (error) {
      await provider.disconnect().catch(() => undefined);
      this.backoff = this.backoff ? this.backoff.next(undefined) : RECONNECT_BACKOFF.next();
      this.failedAttempts += 1;
      this.retryAt = Date.now() + this.backoff.duration;
      throw error instanceof ChainUnavailableError
        ? error
        : new ChainUnavailableError(`could not connect: ${(error as Error).message}`);
    }
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

function withTimeout<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new ChainUnavailableError(`${what} within ${ms} ms`)), ms);
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}

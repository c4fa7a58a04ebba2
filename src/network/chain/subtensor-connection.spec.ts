import { AddressInfo, createServer, Server } from 'node:net';
import type { ApiPromise } from '@polkadot/api';
import { Logger } from '@nestjs/common';
import { freePort } from '../../../bench/support/ports';
import { ChainReplay, startChainReplay } from '../../../test/support/chain-replay';
import { until } from '../../../test/support/until';
import { exposedGc } from '../../common/lifecycle/idle-memory';
import { ChainUnavailableError, SubtensorConnection } from './subtensor-connection';

/** The replay answers: a bound for connecting and reading that a loaded machine meets. */
const CONNECTION_TIMEOUT_MS = 60_000;

const FINNEY_GENESIS = '0x2f0555cc76fc2840a25a6ea3b9637146806f1f44b090c175ffde2a7e5ab36c03';

describe(SubtensorConnection.name, () => {
  describe('against a node that refuses every connection', () => {
    let server: Server;
    let attempts = 0;
    let url: string;

    beforeAll(async () => {
      server = createServer((socket) => {
        attempts += 1;
        socket.destroy();
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      url = `ws://127.0.0.1:${(server.address() as AddressInfo).port}`;
    });
    afterAll(() => new Promise((resolve) => server.close(resolve)));
    // Each test counts its own dials: the other tests of this server dial too, in any order.
    beforeEach(() => (attempts = 0));

    it('fails fast, then waits out a backoff before dialling again', async () => {
      // Time stands still: on a loaded machine (load 22 on 2 cores) more than the 1 s backoff
      // passed between the two uses, and the second dialled again.
      const now = performance.now();
      const clock = jest.spyOn(performance, 'now').mockImplementation(() => now);
      const connection = new SubtensorConnection(url, 2000);
      try {
        await expect(connection.use(async () => 'read')).rejects.toThrow(ChainUnavailableError);
        expect(attempts).toBe(1);
        // system-status shows this: why, how long, and how many attempts failed so far.
        await expect(connection.use(async () => 'read')).rejects.toThrow(
          /^could not connect: .+; reconnecting in \d+ s \(1 failed attempts\)$/,
        );
        expect(attempts).toBe(1);
      } finally {
        clock.mockRestore();
        await connection.close();
      }
    });

    // The waits as the reconnect's comment says (1 s, doubling, at most a minute): cockatiel's
    // default jitter made the first wait under a second and some shorter than the one before.
    it('waits 1 s before reconnecting, then twice as long each time, up to a minute', async () => {
      // Whole milliseconds: a fractional start left a 4 s wait 4.0000000005 s (said 5).
      let now = 1_000_000;
      const clock = jest.spyOn(performance, 'now').mockImplementation(() => now);
      const connection = new SubtensorConnection(url, 2000);
      const waits: number[] = [];
      try {
        for (let failed = 1; failed <= 9; failed += 1) {
          await expect(connection.use(async () => 'read')).rejects.toThrow(/^could not connect/);
          const waiting = (await connection
            .use(async () => 'read')
            .catch((e: Error) => e)) as Error;
          const seconds = Number(
            new RegExp(`reconnecting in (\\d+) s \\(${failed} failed attempts\\)$`).exec(
              waiting.message,
            )?.[1],
          );
          waits.push(seconds);
          // The wait is over: the next use dials again.
          now += seconds * 1000;
        }
      } finally {
        clock.mockRestore();
        await connection.close();
      }
      expect(waits).toEqual([1, 2, 4, 8, 16, 32, 60, 60, 60]);
    });

    // An audit's finding: the backoff ended at a wall-clock time, so a clock set back 6 h kept
    // the node undialled for 6 h (docs/decisions.md, "Clocks").
    it('waits out its backoff, not a step of the wall clock back', async () => {
      const connection = new SubtensorConnection(url, 2000);
      const wall = jest.spyOn(Date, 'now');
      try {
        await expect(connection.use(async () => 'read')).rejects.toThrow(/^could not connect/);
        const stepped = Date.now() - 6 * 3_600_000;
        wall.mockImplementation(() => stepped);
        const waiting = (await connection.use(async () => 'read').catch((e: Error) => e)) as Error;
        expect(waiting.message).toMatch(/reconnecting in 1 s \(1 failed attempts\)$/);
      } finally {
        wall.mockRestore();
        await connection.close();
      }
    });

    // A port nothing listens on, with a bound far over the test's: the refusal itself fails the
    // use, on Node 20's `ws` and on Node 22+'s own WebSocket alike (the image's Node 24 was
    // suspected of waiting the bound out; docs/decisions.md, "Supported Node versions").
    it('sees a refused connection at once, whatever the bound', async () => {
      const connection = new SubtensorConnection(`ws://127.0.0.1:${await freePort()}`, 60_000);
      const started = performance.now();
      try {
        const failure = (await connection.use(async () => 'read').catch((e: Error) => e)) as Error;
        expect(failure).toBeInstanceOf(ChainUnavailableError);
        expect(failure.message).toMatch(/^could not connect: \S/);
        expect(performance.now() - started).toBeLessThan(5000);
      } finally {
        await connection.close();
      }
    });

    // The vote's publication and the network aggregate's 503 show the waiting use's error: the
    // backoff alone told an operator nothing of what was wrong with the node.
    it('names the last connection error while waiting out the backoff, without credentials', async () => {
      const refused = await freePort();
      const connection = new SubtensorConnection(
        `ws://gateway:s3cret-token@127.0.0.1:${refused}/?token=query-s3cret`,
        2000,
      );
      try {
        const first = (await connection.use(async () => 'read').catch((e: Error) => e)) as Error;
        // A cause, whatever the client said (once, in a full run, its error had no message).
        expect(first.message).toMatch(/^could not connect: \S/);
        const waiting = (await connection.use(async () => 'read').catch((e: Error) => e)) as Error;
        expect(waiting).toBeInstanceOf(ChainUnavailableError);
        expect(waiting.message).toMatch(/; reconnecting in \d+ s \(1 failed attempts\)$/);
        expect(waiting.message.startsWith(`${first.message}; `)).toBe(true);
        for (const secret of ['gateway', 's3cret-token', 'query-s3cret'])
          expect(waiting.message).not.toContain(secret);
      } finally {
        await connection.close();
      }
    });
  });

  describe('against the replayed node', () => {
    let replay: ChainReplay;

    beforeAll(async () => {
      replay = await startChainReplay();
    });
    afterAll(() => replay.stop());
    /**
     * The client of `connection`'s open connection once it has seen the replay's runtime
     * upgraded to spec 400 (put back to 343 by the test).
     */
    async function upgradedUnder(connection: SubtensorConnection): Promise<ApiPromise> {
      const api = await connection.use(async (client) => client);
      replay.upgradeRuntime(400);
      await until(
        async () => (api.runtimeVersion.specVersion.toNumber() === 400 ? true : undefined),
        10_000,
      );
      return api;
    }

    /** A connection to the replay whose lines go nowhere. */
    const quietConnection = () =>
      new SubtensorConnection(replay.url, CONNECTION_TIMEOUT_MS, {
        log: () => undefined,
        warn: () => undefined,
      });
    // Dropped connections make @polkadot/api report each cut-off call (routed to a Nest logger,
    // polkadot-console.ts), and the default logger tells each reconnection: the tests read
    // their own loggers, and the run's output stays free of expected noise.
    beforeEach(() => {
      for (const level of ['log', 'warn', 'error'] as const)
        jest.spyOn(Logger.prototype, level).mockImplementation(() => undefined);
    });
    afterEach(() => jest.restoreAllMocks());

    it('logs which chain it reached, with the address but not its credentials', async () => {
      const logger = { log: jest.fn(), warn: jest.fn() };
      const port = new URL(replay.url).port;
      const connection = new SubtensorConnection(
        `ws://gateway:s3cret-token@127.0.0.1:${port}`,
        CONNECTION_TIMEOUT_MS,
        logger,
      );
      try {
        expect(connection.identity).toBeUndefined();
        expect(connection.isConnected).toBe(false);
        await connection.use(async () => undefined);
        expect(connection.isConnected).toBe(true);
        expect(connection.identity).toEqual({
          chain: 'Bittensor',
          genesisHash: FINNEY_GENESIS,
          bestBlock: 6_852_690,
        });
        expect(logger.log.mock.calls).toEqual([
          [
            `connected to subtensor ws://127.0.0.1:${port}: chain Bittensor, ` +
              `genesis ${FINNEY_GENESIS}, best block 6852690`,
          ],
        ]);
        expect(logger.warn).not.toHaveBeenCalled();
      } finally {
        await connection.close();
      }
      expect(connection.isConnected).toBe(false);
    });

    it('names the node by its address, without credentials, in the errors it throws', async () => {
      const port = new URL(replay.url).port;
      const connection = new SubtensorConnection(
        `ws://gateway:s3cret-token@127.0.0.1:${port}`,
        CONNECTION_TIMEOUT_MS,
        { log: () => undefined, warn: () => undefined },
      );
      try {
        // Dropped under both the read and its retry on a new connection.
        const error = await connection
          .use(async (api) => {
            replay.dropConnections();
            return api.rpc.chain.getHeader();
          })
          .catch((caught: Error) => caught);
        expect(error).toBeInstanceOf(ChainUnavailableError);
        expect((error as Error).message).toMatch(
          new RegExp(`^connection lost: disconnected from ws://127\\.0\\.0\\.1:${port}: `),
        );
        expect((error as Error).message).not.toContain('s3cret-token');
      } finally {
        await connection.close();
      }
    });

    it('gives up on a node that stops answering, and reconnects on the next use', async () => {
      // Connecting (metadata decoded included) is given all the time a loaded machine needs;
      // the read of a silent node is what is bounded at 1000 ms.
      const connection = new SubtensorConnection(
        replay.url,
        1000,
        undefined,
        CONNECTION_TIMEOUT_MS,
      );
      try {
        const header = (api: Parameters<Parameters<typeof connection.use>[0]>[0]) =>
          api.rpc.chain.getHeader().then((value) => value.number.toNumber());
        expect(await connection.use(header)).toBe(6_852_690);
        replay.mode = 'silent';
        await expect(connection.use(header)).rejects.toThrow(/no answer within 1000 ms/);
        replay.mode = 'answer';
        const connectsBefore = replay.calls.filter((method) => method === 'rpc_methods').length;
        expect(await connection.use(header)).toBe(6_852_690);
        expect(replay.calls.filter((method) => method === 'rpc_methods').length).toBe(
          connectsBefore + 1,
        );
      } finally {
        replay.mode = 'answer';
        await connection.close();
      }
    }, 120_000);

    // The bound covers one call whole: connecting, identifying the chain and the read. A node
    // that answers a connection's set-up and then goes silent got it three times over (and the
    // client's own plain "No response received" error came out, the wedged socket kept).
    it('bounds connecting, identifying and the read by one deadline, and lets a silent node go', async () => {
      const timeoutMs = 3000;
      const connection = new SubtensorConnection(replay.url, timeoutMs, {
        log: () => undefined,
        warn: () => undefined,
      });
      // Set-up answered; from the first header asked for (identifying the chain), silence.
      replay.onCall = (method) => {
        if (method === 'chain_getHeader') replay.mode = 'silent';
      };
      try {
        const started = Date.now();
        const error = await connection.use(bestBlock).catch((caught: Error) => caught);
        const took = Date.now() - started;
        expect(error).toBeInstanceOf(ChainUnavailableError);
        expect((error as Error).message).toMatch(/within 3000 ms$/);
        expect(replay.calls).toContain('chain_getHeader');
        expect(took).toBeLessThan(timeoutMs + 1000);
        expect(connection.isConnected).toBe(false);
      } finally {
        replay.onCall = undefined;
        replay.mode = 'answer';
        await connection.close();
      }
    }, 30_000);

    // A node's JSON-RPC error, and the client's own no-response error, are the node being
    // unusable now (ChainUnavailableError: a 503 on the HTTP path), and the socket is let go.
    it.each([
      ['a JSON-RPC error', (api: ApiPromise) => api.call.neuronInfoRuntimeApi.getNeuronsLite(1)],
      [
        "the client's no-response error",
        () => Promise.reject(new Error('No response received from RPC endpoint in 3s')),
      ],
    ])(
      'turns %s into ChainUnavailableError and drops the connection',
      async (_, read) => {
        const connection = new SubtensorConnection(replay.url, CONNECTION_TIMEOUT_MS, {
          log: () => undefined,
          warn: () => undefined,
        });
        replay.refusedCalls.add('NeuronInfoRuntimeApi_get_neurons_lite');
        try {
          await connection.use(bestBlock);
          await expect(connection.use(read)).rejects.toThrow(ChainUnavailableError);
          expect(connection.isConnected).toBe(false);
        } finally {
          replay.refusedCalls.clear();
          await connection.close();
        }
      },
      120_000,
    );

    const connects = () => replay.calls.filter((method) => method === 'rpc_methods').length;
    const bestBlock = (api: Parameters<Parameters<SubtensorConnection['use']>[0]>[0]) =>
      api.rpc.chain.getHeader().then((header) => header.number.toNumber());

    // A node restarting under a read costs the caller nothing: the read is made again at once.
    it('makes a read cut off by the connection dropping again on a new connection', async () => {
      const connection = quietConnection();
      try {
        let attempts = 0;
        const block = await connection.use(async (api) => {
          attempts += 1;
          if (attempts === 1) replay.dropConnections();
          return bestBlock(api);
        });
        expect(block).toBe(6_852_690);
        expect(attempts).toBe(2);
      } finally {
        await connection.close();
      }
    }, 120_000);

    // After an upgrade the client reloads V14 metadata, without the runtime APIs: every read
    // failed on that connection until its socket dropped (a chain-faults audit).
    it('connects again after a runtime upgrade, to read the new runtime APIs', async () => {
      const lines: string[] = [];
      const connection = new SubtensorConnection(replay.url, CONNECTION_TIMEOUT_MS, {
        log: (line: string) => void lines.push(line),
        warn: () => undefined,
      });
      try {
        const first = await upgradedUnder(connection);
        const after = await connection.use(async (api) => ({
          api,
          runtimeApi: typeof api.call.neuronInfoRuntimeApi,
        }));
        expect(after.runtimeApi).toBe('object');
        expect(after.api).not.toBe(first);
        expect(lines).toContainEqual(
          `subtensor ${connection.address}: runtime upgraded from spec 343 to 400; connecting ` +
            'again to read its metadata',
        );
      } finally {
        replay.upgradeRuntime(343);
        await connection.close();
      }
    }, 120_000);

    // Closed while a use let the upgraded connection go: a new one was opened after close, and
    // its set-up's failure went unhandled, which ends the process (a review's finding).
    it('opens no connection once closed while a use lets an upgraded one go', async () => {
      const connection = quietConnection();
      const unhandled: unknown[] = [];
      const onUnhandled = (reason: unknown) => void unhandled.push(reason);
      process.on('unhandledRejection', onUnhandled);
      try {
        await upgradedUnder(connection);
        const connectionsBefore = replay.calls.filter((call) => call === 'rpc_methods').length;
        const use = connection.use(async (api) => api.genesisHash.toHex());
        await new Promise(setImmediate);
        await connection.close();
        await expect(use).rejects.toThrow('connection closed');
        await new Promise((done) => setTimeout(done, 500));
        expect(unhandled).toEqual([]);
        expect(replay.calls.filter((call) => call === 'rpc_methods').length).toBe(
          connectionsBefore,
        );
      } finally {
        process.off('unhandledRejection', onUnhandled);
        replay.upgradeRuntime(343);
        await connection.close();
      }
    }, 120_000);

    // Each reconnection kept its client (metadata, registry: about 12 MB) reachable until close,
    // through a race against a promise as old as the connection (a chain-faults audit).
    it("lets go of a dropped connection's client once connected again", async () => {
      const connection = quietConnection();
      try {
        let first: WeakRef<ApiPromise> | undefined;
        await connection.use(async (api) => {
          first = new WeakRef(api);
          return api.genesisHash.toHex();
        });
        replay.dropConnections();
        await until(async () => (connection.isConnected ? undefined : true), 10_000);
        await connection.use(async (api) => api.genesisHash.toHex());
        // Past the bound of a close's wait (CLOSE_WAIT_MS, 2 s), which holds the client until
        // then; the spied loggers keep what they were called with (the client's errors).
        await new Promise((done) => setTimeout(done, 3_000));
        jest.clearAllMocks();
        const gc = exposedGc();
        gc();
        gc({ type: 'major', execution: 'sync', flavor: 'last-resort' });
        expect(first!.deref()).toBeUndefined();
      } finally {
        await connection.close();
      }
    }, 120_000);

    // Reads that start together (the metagraph, a commitment) share one connection: a second
    // would be overwritten by the first and never closed.
    it('opens one connection for uses that start together', async () => {
      const connection = quietConnection();
      try {
        const before = connects();
        const blocks = await Promise.all([connection.use(bestBlock), connection.use(bestBlock)]);
        expect(blocks).toEqual([6_852_690, 6_852_690]);
        expect(connects()).toBe(before + 1);
      } finally {
        await connection.close();
      }
    }, 120_000);

    // A commitment refused by the chain's rate limit waits and retries; any other refusal is a
    // failure. Both are the work's own verdicts, which once came out as ChainUnavailableError
    // (the publication worker then failed a rate-limited vote instead of waiting).
    it("passes long work's own errors through as they are, and still calls a read's unavailable", async () => {
      class Verdict extends Error {}
      const connection = quietConnection();
      try {
        const verdict = new Verdict('commitments.SpaceLimitExceeded');
        await expect(connection.useLong(() => Promise.reject(verdict), 5_000)).rejects.toBe(
          verdict,
        );
        await expect(connection.use(() => Promise.reject(new Verdict('garbage')))).rejects.toThrow(
          ChainUnavailableError,
        );
        // The connection was kept: the work's error says nothing about the node.
        const before = connects();
        await connection.use(bestBlock);
        expect(connects()).toBe(before);
      } finally {
        await connection.close();
      }
    }, 120_000);

    // The warning is for a node that now serves another chain; the same chain again is news only.
    it('logs a reconnection to the same chain as a connection, not as a warning', async () => {
      const logger = { log: jest.fn(), warn: jest.fn() };
      const connection = new SubtensorConnection(replay.url, CONNECTION_TIMEOUT_MS, logger);
      try {
        await connection.use(bestBlock);
        replay.dropConnections();
        await connection.use(bestBlock);
        expect(logger.log).toHaveBeenCalledTimes(2);
        expect(logger.warn).not.toHaveBeenCalled();
      } finally {
        await connection.close();
      }
    }, 120_000);

    // Start-up no longer waits for the first read, so a shutdown can come while a silent node
    // holds a connection under way: it is given up, not waited out to its deadline.
    it('gives up a connection under way when closed', async () => {
      replay.mode = 'silent';
      const connection = quietConnection();
      try {
        const use = connection.use(bestBlock).catch((e: Error) => e);
        await new Promise((resolve) => setTimeout(resolve, 500));
        const started = performance.now();
        await connection.close();
        expect(await use).toBeInstanceOf(ChainUnavailableError);
        expect(performance.now() - started).toBeLessThan(5000);
      } finally {
        replay.mode = 'answer';
      }
    }, 120_000);

    // After shutdown a late use (a sync under way) must not open a connection nobody closes.
    it('refuses every use once closed, without connecting again', async () => {
      const connection = quietConnection();
      await connection.use(bestBlock);
      await connection.close();
      const before = connects();
      await expect(connection.use(bestBlock)).rejects.toThrow('connection closed');
      expect(connects()).toBe(before);
      expect(connection.isConnected).toBe(false);
    }, 120_000);
  });
});

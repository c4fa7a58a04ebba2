import { format } from 'node:util';
import { ChainReplay, startChainReplay } from '../../../test/support/chain-replay';
import { until } from '../../../test/support/until';
import { routePolkadotConsole } from './polkadot-console';
import { SubtensorConnection } from './subtensor-connection';

const USER_TOKEN = 'userinfo-token-5f0c2a9e1d';
const QUERY_TOKEN = 'query-token-8b7e4d3c2a';
const quiet = { log: () => undefined, warn: () => undefined };

/**
 * Everything the process writes while the test runs, through the console or straight to
 * stdout and stderr (Nest's default logger writes there), kept instead of written.
 */
function captureOutput(): { text: () => string } {
  const written: string[] = [];
  for (const method of ['log', 'info', 'warn', 'error', 'debug'] as const)
    jest.spyOn(console, method).mockImplementation((...values: unknown[]) => {
      written.push(format(...values));
    });
  for (const stream of [process.stdout, process.stderr])
    jest.spyOn(stream, 'write').mockImplementation((chunk: string | Uint8Array) => {
      written.push(String(chunk));
      return true;
    });
  return { text: () => written.join('\n') };
}

/** @polkadot/util's logger's call, as `logger('rpc-core').error(...)` makes it. */
const polkadotLine = (...values: unknown[]) => [
  '2026-01-02 03:04:05',
  'RPC-CORE:'.padStart(16),
  ...values,
];

describe(routePolkadotConsole.name, () => {
  afterEach(() => jest.restoreAllMocks());

  describe('with the chain client connected through a URL that carries tokens', () => {
    let replay: ChainReplay;
    let port: string;

    beforeAll(async () => {
      replay = await startChainReplay();
      port = new URL(replay.url).port;
    });
    afterAll(() => replay.stop());
    afterEach(() => {
      replay.mode = 'answer';
    });

    it.each([
      ['in its user info', () => `ws://gateway:${USER_TOKEN}@127.0.0.1:${port}`],
      ['in its query', () => `ws://127.0.0.1:${port}/?token=${QUERY_TOKEN}&tier=free`],
    ])(
      'writes no token when the connection drops under a call (token %s)',
      async (_, url) => {
        const output = captureOutput();
        const connection = new SubtensorConnection(url(), 60_000, quiet);
        try {
          await expect(
            connection.use(async (api) => {
              replay.dropConnections();
              return api.rpc.chain.getHeader();
            }),
          ).rejects.toThrow(/connection lost/);
        } finally {
          await connection.close();
        }
        // The client's own line about the dropped call, through our logger, by address only.
        expect(output.text()).toMatch(
          new RegExp(`RPC-CORE: getHeader\\(.*disconnected from ws://127\\.0\\.0\\.1:${port}: `),
        );
        expect(output.text()).not.toContain(USER_TOKEN);
        expect(output.text()).not.toContain(QUERY_TOKEN);
      },
      60_000,
    );

    it('writes no token when the node stops answering while connecting', async () => {
      const output = captureOutput();
      replay.mode = 'silent';
      const connection = new SubtensorConnection(
        `ws://gateway:${USER_TOKEN}@127.0.0.1:${port}/?token=${QUERY_TOKEN}`,
        1000,
        quiet,
      );
      try {
        await expect(connection.use(async () => undefined)).rejects.toThrow(/could not connect/);
      } finally {
        await connection.close();
      }
      // The client fails what it was still waiting for once the socket has closed, after close().
      await until(async () => (output.text().includes('API/INIT') ? true : undefined), 5000);
      expect(output.text()).toContain(
        `API/INIT: Error: FATAL: Unable to initialize the API: disconnected from ws://127.0.0.1:${port}: `,
      );
      expect(output.text()).not.toContain(USER_TOKEN);
      expect(output.text()).not.toContain(QUERY_TOKEN);
    });
  });

  it('writes no token when the URL cannot be connected to', async () => {
    // SUBTENSOR_URL is checked for its scheme only: a port out of range is found on connecting.
    const url = `ws://gateway:${USER_TOKEN}@127.0.0.1:99999/?token=${QUERY_TOKEN}`;
    const output = captureOutput();
    const connection = new SubtensorConnection(url, 2000, quiet);
    try {
      const error = (await connection.use(async () => undefined).catch((e: Error) => e)) as Error;
      // Node 20 runs the client on the ws package, which quotes the URL (named here as the
      // configured node); Node 22 and later on Node's own WebSocket, which does not quote it.
      expect(error.message).toMatch(
        /^could not connect: (Invalid URL: the configured node|TypeError: Invalid URL)$/,
      );
    } finally {
      await connection.close();
    }
    expect(output.text()).toMatch(
      /API-WS: (SyntaxError: Invalid URL: the configured node|DOMException \[SyntaxError\]: TypeError: Invalid URL)/,
    );
    expect(output.text()).not.toContain(USER_TOKEN);
    expect(output.text()).not.toContain(QUERY_TOKEN);
  });

  it("leaves other writers' console lines as they are", () => {
    const output = captureOutput();
    routePolkadotConsole('ws://127.0.0.1:1');
    const url = `ws://gateway:${USER_TOKEN}@127.0.0.1:1`;
    console.error('not the chain client', url);
    console.warn('2026-01-02 03:04:05', 'short:', url);
    console.log('2026-01-02 03:04:05', 'lower-case-origin:'.padStart(16), url);
    expect(output.text().split('\n')).toEqual([
      `not the chain client ${url}`,
      `2026-01-02 03:04:05 short: ${url}`,
      `2026-01-02 03:04:05 lower-case-origin: ${url}`,
    ]);
  });

  it('routes its lines again after a console method was replaced, once', () => {
    routePolkadotConsole('ws://127.0.0.1:1');
    const output = captureOutput(); // replaces console.error
    routePolkadotConsole('ws://127.0.0.1:1');
    routePolkadotConsole('ws://127.0.0.1:1');
    console.error(...polkadotLine(new Error(`disconnected from ws://u:${USER_TOKEN}@127.0.0.1:1`)));
    const text = output.text();
    expect(text).toContain('RPC-CORE: Error: disconnected from ws://127.0.0.1:1');
    expect(text.match(/RPC-CORE/g)).toHaveLength(1);
    expect(text).not.toContain(USER_TOKEN);
  });
});

import { AddressInfo, createServer, Server } from 'node:net';
import { ChainReplay, startChainReplay } from '../../../test/support/chain-replay';
import { ChainUnavailableError, SubtensorConnection } from './subtensor-connection';

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

    it('fails fast, then waits out a backoff before dialling again', async () => {
      const connection = new SubtensorConnection(url, 2000);
      try {
        await expect(connection.use(async () => 'read')).rejects.toThrow(ChainUnavailableError);
        expect(attempts).toBe(1);
        await expect(connection.use(async () => 'read')).rejects.toThrow(/reconnecting in \d+ s/);
        expect(attempts).toBe(1);
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

    it('gives up on a node that stops answering, and reconnects on the next use', async () => {
      // Connecting (metadata decoded included) is given all the time a loaded machine needs;
      // the read of a silent node is what is bounded at 1000 ms.
      const connection = new SubtensorConnection(replay.url, 1000, 60_000);
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
  });
});

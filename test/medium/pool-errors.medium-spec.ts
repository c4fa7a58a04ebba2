import { once } from 'node:events';
import { AddressInfo, createServer, Server, Socket } from 'node:net';
import { Client, Pool, PoolConfig } from 'pg';
import {
  buildDataSourceOptions,
  buildMigrationDataSourceOptions,
} from '../../src/database/data-source-options';

/** One message of Postgres's wire protocol: a type byte, a length, a body. */
function message(type: string, body: Buffer): Buffer {
  const head = Buffer.alloc(5);
  head.write(type, 0, 'latin1');
  head.writeInt32BE(body.length + 4, 1);
  return Buffer.concat([head, body]);
}

const AUTHENTICATION_OK = message('R', Buffer.alloc(4));
const READY_FOR_QUERY = message('Z', Buffer.from('I'));
const TERMINATING = message(
  'E',
  Buffer.from(
    'SFATAL\0VFATAL\0C57P01\0Mterminating connection due to administrator command\0\0',
    'latin1',
  ),
);

/**
 * A server that accepts a connection and, in one write, tells it it is ready and that it is
 * being terminated: what a client can read from a Postgres shutting down as the connection
 * completes (a restart, a failover). Nothing here is a real Postgres: it is the moment that is
 * hard to catch on one.
 */
async function terminatingServer(): Promise<{ server: Server; url: string; sockets: Socket[] }> {
  const sockets: Socket[] = [];
  const server = createServer((socket) => {
    sockets.push(socket);
    socket.on('error', () => undefined);
    socket.once('data', () =>
      socket.write(Buffer.concat([AUTHENTICATION_OK, READY_FOR_QUERY, TERMINATING])),
    );
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return { server, url: `postgres://postgres@127.0.0.1:${port}/gateway`, sockets };
}

describe('pooled connections when Postgres terminates them', () => {
  let fake: Awaited<ReturnType<typeof terminatingServer>>;
  /** 'error' events a connection emitted with no listener: each would have thrown. */
  const unheard: Error[] = [];
  let emit: jest.SpyInstance;

  beforeAll(async () => {
    fake = await terminatingServer();
    const original = Client.prototype.emit;
    emit = jest.spyOn(Client.prototype, 'emit').mockImplementation(function (
      this: Client,
      event: string | symbol,
      ...args: unknown[]
    ) {
      if (event === 'error' && this.listenerCount('error') === 0) {
        unheard.push(args[0] as Error);
        return false;
      }
      return original.call(this, event, ...args);
    });
  });

  afterAll(async () => {
    emit.mockRestore();
    for (const socket of fake.sockets) socket.destroy();
    fake.server.close();
    await once(fake.server, 'close');
  });

  beforeEach(() => {
    unheard.length = 0;
  });

  /**
   * Connects as TypeORM's query runner does: its 'error' listener attached once it has the
   * connection. With the service's settings, the session's set-up (onConnect) reads the
   * termination: pg-pool drops the connection and the caller's connect fails, as in any outage.
   */
  async function connectAsTypeOrm(config: PoolConfig): Promise<{ pool: Pool; failed: boolean }> {
    const pool = new Pool({ ...config, connectionString: fake.url });
    // TypeORM's own pool listener.
    pool.on('error', () => undefined);
    const client = await pool.connect().catch(() => undefined);
    if (client === undefined) return { pool, failed: true };
    client.on('error', () => undefined);
    const failed = await client.query('SELECT 1').then(
      () => false,
      () => true,
    );
    client.release();
    return { pool, failed };
  }

  it("throws nothing with the service's pool settings, and drops the terminated connection", async () => {
    const { extra } = buildDataSourceOptions(fake.url) as { extra: PoolConfig };
    const { pool, failed } = await connectAsTypeOrm(extra);

    expect(unheard).toEqual([]);
    expect(failed).toBe(true);
    // Not kept for the next caller.
    expect(pool.totalCount).toBe(0);
    await pool.end();
  });

  it('throws nothing on the migrating connections either (start-up, command line, tests)', async () => {
    const { extra } = buildMigrationDataSourceOptions(fake.url) as { extra: PoolConfig };
    const { pool, failed } = await connectAsTypeOrm(extra);

    expect(unheard).toEqual([]);
    expect(failed).toBe(true);
    await pool.end();
  });

  it('would throw without them: the connection is handed out with no listener as the termination is read', async () => {
    const { extra } = buildDataSourceOptions(fake.url) as { extra: PoolConfig };
    const { pool } = await connectAsTypeOrm({ ...extra, onConnect: undefined });

    expect(unheard.map((error) => (error as Error & { code?: string }).code)).toEqual(['57P01']);
    await pool.end();
  });
});

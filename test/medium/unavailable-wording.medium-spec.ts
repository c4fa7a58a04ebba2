import { once } from 'node:events';
import { AddressInfo, connect, createServer, Server, Socket } from 'node:net';
import { Client, Pool } from 'pg';
import { isDatabaseUnavailable } from '../../src/common/database-unavailable';
import { testDatabaseUrl } from '../support/database';

/**
 * pg and pg-pool raise some of their failures as plain Errors without a code, which
 * isDatabaseUnavailable recognises by their words (a 503, not a 500). Its unit spec writes those
 * words by hand; here the installed libraries say them, so that a release that rewords one fails
 * this spec rather than turning an outage's 503s into 500s unseen (a dependency drift audit).
 */
describe('the words of pg and pg-pool that say Postgres is unavailable, as the installed libraries say them', () => {
  let silent: Server;
  let silentPort: number;
  const sockets: Socket[] = [];

  beforeAll(async () => {
    // Accepts connections and never answers: a server (or a network) that has stopped.
    silent = createServer((socket) => {
      sockets.push(socket);
      socket.on('error', () => undefined);
    });
    silent.listen(0, '127.0.0.1');
    await once(silent, 'listening');
    silentPort = (silent.address() as AddressInfo).port;
  });
  afterAll(async () => {
    for (const socket of sockets) socket.destroy();
    silent.close();
    await once(silent, 'close');
  });

  const silentUrl = (): string => `postgres://postgres@127.0.0.1:${silentPort}/gateway`;

  /** What `work` failed with; the libraries' words are asserted too, so a change shows. */
  async function failure(work: () => Promise<unknown>): Promise<Error> {
    try {
      await work();
    } catch (error) {
      return error as Error;
    }
    throw new Error('it did not fail');
  }

  // The service reaches Postgres through pools only (TypeORM's, the health check's): a bare
  // Client's own connect timeout says `timeout expired`, which a pool wraps as below.
  it("recognises a pool's new connection that timed out", async () => {
    const pool = new Pool({ connectionString: silentUrl(), connectionTimeoutMillis: 200, max: 1 });
    try {
      const error = await failure(() => pool.query('SELECT 1'));
      expect(error.message).toBe('Connection terminated due to connection timeout');
      expect(isDatabaseUnavailable(error)).toBe(true);
    } finally {
      await pool.end();
    }
  });

  it('recognises a pool whose only connection is taken past the wait', async () => {
    const pool = new Pool({
      connectionString: testDatabaseUrl(),
      connectionTimeoutMillis: 200,
      max: 1,
    });
    const held = await pool.connect();
    try {
      const error = await failure(() => pool.query('SELECT 1'));
      expect(error.message).toBe('timeout exceeded when trying to connect');
      expect(isDatabaseUnavailable(error)).toBe(true);
    } finally {
      held.release();
      await pool.end();
    }
  });

  it("recognises a query that outlasted the client's read timeout", async () => {
    const client = new Client({ connectionString: testDatabaseUrl(), query_timeout: 100 });
    await client.connect();
    try {
      const error = await failure(() => client.query('SELECT pg_sleep(2)'));
      expect(error.message).toBe('Query read timeout');
      expect(isDatabaseUnavailable(error)).toBe(true);
    } finally {
      await client.end().catch(() => undefined);
    }
  });

  // A network cut or a killed server: the socket closes with no word from Postgres.
  it('recognises a connection cut under a query', async () => {
    const target = new URL(testDatabaseUrl());
    const cut: Socket[] = [];
    const proxy = createServer((inbound) => {
      const outbound = connect(Number(target.port || 5432), target.hostname);
      for (const socket of [inbound, outbound]) socket.on('error', () => undefined);
      inbound.pipe(outbound).pipe(inbound);
      cut.push(inbound, outbound);
    });
    proxy.listen(0, '127.0.0.1');
    await once(proxy, 'listening');
    const via = new URL(target);
    via.hostname = '127.0.0.1';
    via.port = String((proxy.address() as AddressInfo).port);
    const client = new Client({ connectionString: via.toString() });
    client.on('error', () => undefined);
    try {
      await client.connect();
      const running = failure(() => client.query('SELECT pg_sleep(5)'));
      await new Promise((resolve) => setTimeout(resolve, 100));
      for (const socket of cut) socket.destroy();
      const error = await running;
      expect(error.message).toBe('Connection terminated unexpectedly');
      expect(isDatabaseUnavailable(error)).toBe(true);
    } finally {
      await client.end().catch(() => undefined);
      proxy.close();
    }
  });

  // Recognised by its code, not its words; here so that the two ways a connection ends are side
  // by side.
  it('recognises a connection the server terminated under a query, by its code', async () => {
    const client = new Client({ connectionString: testDatabaseUrl() });
    await client.connect();
    client.on('error', () => undefined);
    const killer = new Client({ connectionString: testDatabaseUrl() });
    await killer.connect();
    try {
      const pid = (await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]
        .pid;
      const running = failure(() => client.query('SELECT pg_sleep(5)'));
      await new Promise((resolve) => setTimeout(resolve, 100));
      await killer.query('SELECT pg_terminate_backend($1)', [pid]);
      const error = await running;
      expect(error).toHaveProperty('code', '57P01');
      expect(isDatabaseUnavailable(error)).toBe(true);
    } finally {
      await killer.end();
      await client.end().catch(() => undefined);
    }
  });
});

import { once } from 'node:events';
import { AddressInfo, createServer, Server, Socket } from 'node:net';
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

  it('recognises a connection the server closed under a query', async () => {
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
      expect(isDatabaseUnavailable(await running)).toBe(true);
    } finally {
      await killer.end();
      await client.end().catch(() => undefined);
    }
  });
});

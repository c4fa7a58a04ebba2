import { createSocket } from 'node:dgram';
import dns, { LookupAddress } from 'node:dns';
import { connect, createServer, LookupFunction, Server } from 'node:net';
import { promisify } from 'node:util';
import { isLocal, nonLoopbackDatabaseHost } from './connections';
import { refusedConnections } from './loopback-only';

/** The error (or none) a connection to `host:port` ends with. */
function outcome(host: string, port: number, lookup?: LookupFunction): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect({ host, port, ...(lookup ? { lookup } : {}) });
    socket.once('connect', () => {
      socket.destroy();
      resolve('connected');
    });
    socket.once('error', (error) => resolve(error.message));
  });
}

/** A lookup that answers `address` for every name, as a hostile or mistaken resolver would. */
function resolvingTo(address: string): LookupFunction {
  type Answer = (error: null, address: string | LookupAddress[], family?: number) => void;
  const lookup = (_hostname: string, options: { all?: boolean }, callback: Answer) =>
    process.nextTick(() =>
      options.all ? callback(null, [{ address, family: 4 }]) : callback(null, address, 4),
    );
  return lookup;
}

async function listening(): Promise<{ server: Server; port: number }> {
  const server = createServer((socket) => socket.end());
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  return { server, port: (server.address() as { port: number }).port };
}

// The guard (./loopback-only.ts, set up around every spec by jest.config.js) is tested like
// the rest. TEST-NET-3 addresses (RFC 5737) stand for a miner's public one.
describe('Connections from tests', () => {
  afterEach(() => {
    // Taken back, so that this spec's own refusals do not fail it.
    refusedConnections.length = 0;
  });

  it('are refused, without dialling, to anywhere but loopback, and recorded', async () => {
    expect(await outcome('203.0.113.7', 8091)).toBe(
      '203.0.113.7:8091: a test may connect to loopback only',
    );
    await expect(
      fetch('http://203.0.113.8:8092/', { signal: AbortSignal.timeout(5000) }),
    ).rejects.toThrow();
    expect(refusedConnections).toEqual(['203.0.113.7:8091', '203.0.113.8:8092']);
  });

  it('are never started for a refused address', () => {
    const socket = connect({ host: '203.0.113.7', port: 8091 });
    socket.on('error', () => undefined);
    // Node's connect marks the socket connecting before it looks up or dials anything.
    expect(socket.connecting).toBe(false);
    socket.destroy();
  });

  it('go through to loopback', async () => {
    const { server, port } = await listening();
    try {
      expect(await outcome('127.0.0.1', port)).toBe('connected');
      expect(await outcome('127.0.0.9', port).catch(String)).not.toMatch(/loopback only/);
      expect(await outcome('localhost', port)).toBe('connected');
    } finally {
      server.close();
    }
    expect(refusedConnections).toEqual([]);
  });

  it('are decided on the address a name resolves to, not on how the name reads', async () => {
    expect(await outcome('127.attacker.example', 8093)).toMatch(
      /^127\.attacker\.example \(lookup\): a test may connect to loopback only/,
    );
    expect(refusedConnections).toEqual(['127.attacker.example (lookup)']);
  });

  it('are refused when the caller’s own lookup resolves localhost elsewhere', async () => {
    const { server, port } = await listening();
    try {
      expect(await outcome('localhost', port, resolvingTo('203.0.113.5'))).toBe(
        `localhost:${port} (resolved to 203.0.113.5): a test may connect to loopback only`,
      );
      expect(await outcome('localhost', port, resolvingTo('127.0.0.1'))).toBe('connected');
    } finally {
      server.close();
    }
    expect(refusedConnections).toEqual([`localhost:${port} (resolved to 203.0.113.5)`]);
  });
});

describe('Name lookups from tests', () => {
  afterEach(() => {
    refusedConnections.length = 0;
  });

  it('answer localhost and IP literals', async () => {
    const local = await dns.promises.lookup('localhost');
    expect(['127.0.0.1', '::1']).toContain(local.address);
    await expect(promisify(dns.lookup)('203.0.113.1')).resolves.toEqual({
      address: '203.0.113.1',
      family: 4,
    });
    expect(refusedConnections).toEqual([]);
  });

  it('refuse any other name without asking the resolver, and record it', async () => {
    const error = await new Promise<NodeJS.ErrnoException | null>((resolve) =>
      dns.lookup('example.com', (failure) => resolve(failure)),
    );
    expect(error).toMatchObject({ code: 'ENOTFOUND' });
    await expect(dns.promises.lookup('example.org', { all: true })).rejects.toMatchObject({
      code: 'ENOTFOUND',
    });
    expect(refusedConnections).toEqual(['example.com (lookup)', 'example.org (lookup)']);
  });
});

describe('DNS queries from tests', () => {
  afterEach(() => {
    refusedConnections.length = 0;
  });

  /** The error a callback-style query ends with. */
  const failureOf = (query: (callback: (error: Error | null) => void) => void) =>
    new Promise<Error | null>((resolve) => query(resolve));

  it('are refused whatever the name, before any server is asked, and recorded', async () => {
    // A DNS server of our own on loopback: were a query sent, it would arrive here.
    const server = createSocket('udp4');
    const received: Buffer[] = [];
    server.on('message', (message) => received.push(message));
    await new Promise<void>((done) => server.bind(0, '127.0.0.1', done));
    const resolver = new dns.Resolver();
    resolver.setServers([`127.0.0.1:${server.address().port}`]);
    const promised = new dns.promises.Resolver();
    promised.setServers([`127.0.0.1:${server.address().port}`]);
    try {
      const refused = { code: 'ECONNREFUSED' };
      expect(await failureOf((done) => resolver.resolve4('localhost', done))).toMatchObject(
        refused,
      );
      await expect(promised.resolve('example.net', 'A')).rejects.toMatchObject(refused);
      expect(await failureOf((done) => dns.resolve4('example.com', done))).toMatchObject(refused);
      expect(await failureOf((done) => dns.resolve('example.com', 'MX', done))).toMatchObject(
        refused,
      );
      await expect(dns.promises.resolveTxt('example.org')).rejects.toMatchObject(refused);
      expect(await failureOf((done) => dns.reverse('203.0.113.1', done))).toMatchObject(refused);
      expect(
        await failureOf((done) => dns.lookupService('127.0.0.1', 22, (error) => done(error))),
      ).toMatchObject(refused);
      await expect(dns.promises.lookupService('203.0.113.1', 80)).rejects.toMatchObject(refused);
      await new Promise((done) => setTimeout(done, 200));

      expect(received).toEqual([]);
      expect(refusedConnections).toEqual([
        'localhost (resolve4)',
        'example.net (resolve)',
        'example.com (resolve4)',
        'example.com (resolve)',
        'example.org (resolveTxt)',
        '203.0.113.1 (reverse)',
        '127.0.0.1 (lookupService)',
        '203.0.113.1 (lookupService)',
      ]);
    } finally {
      server.close();
    }
  });
});

describe('Datagrams from tests', () => {
  afterEach(() => {
    refusedConnections.length = 0;
  });

  it('are refused to anywhere but loopback, and recorded', async () => {
    const socket = createSocket('udp4');
    try {
      const error = await new Promise<Error | null>((resolve) =>
        socket.send('x', 53, '203.0.113.9', (failure) => resolve(failure)),
      );
      expect(error?.message).toBe('udp 203.0.113.9: a test may connect to loopback only');
    } finally {
      socket.close();
    }
    expect(refusedConnections).toEqual(['udp 203.0.113.9']);
  });

  it('go through to loopback', async () => {
    const receiver = createSocket('udp4');
    const sender = createSocket('udp4');
    try {
      await new Promise<void>((done) => receiver.bind(0, '127.0.0.1', done));
      const received = new Promise<string>((resolve) =>
        receiver.once('message', (message) => resolve(message.toString())),
      );
      sender.send('hello', receiver.address().port, '127.0.0.1');
      expect(await received).toBe('hello');
    } finally {
      receiver.close();
      sender.close();
    }
    expect(refusedConnections).toEqual([]);
  });
});

describe('isLocal', () => {
  it('takes loopback IP literals, localhost and local sockets, not names that look local', () => {
    const at = (host: string) => ({ host, port: 1, path: undefined });
    expect(isLocal(at('127.0.0.1'))).toBe(true);
    expect(isLocal(at('[::1]'))).toBe(true);
    expect(isLocal(at('::ffff:127.0.0.1'))).toBe(true);
    expect(isLocal(at('localhost'))).toBe(true);
    expect(isLocal({ host: undefined, port: undefined, path: '/tmp/.s.PGSQL.5432' })).toBe(true);
    expect(isLocal(at('127.attacker.example'))).toBe(false);
    expect(isLocal(at('::ffff:203.0.113.9'))).toBe(false);
    expect(isLocal(at('203.0.113.9'))).toBe(false);
  });
});

describe('nonLoopbackDatabaseHost', () => {
  it('passes loopback, localhost and Unix sockets, and names any other host', () => {
    expect(nonLoopbackDatabaseHost('postgres://postgres@127.0.0.1:5432/postgres')).toBeUndefined();
    expect(nonLoopbackDatabaseHost('postgres://u:p@localhost/db')).toBeUndefined();
    expect(nonLoopbackDatabaseHost('postgresql://u@[::1]:5432/db')).toBeUndefined();
    expect(nonLoopbackDatabaseHost('postgres://u@/db?host=/var/run/postgresql')).toBeUndefined();
    expect(nonLoopbackDatabaseHost('postgres://u@db.example.com:5432/db')).toBe('db.example.com');
    expect(nonLoopbackDatabaseHost('postgres://u:p@203.0.113.9/db')).toBe('203.0.113.9');
    expect(nonLoopbackDatabaseHost('postgres://u@127.attacker.example/db')).toBe(
      '127.attacker.example',
    );
  });

  // pg lets the query's host win over the URL's: only the URL's was checked.
  it("names a query's host that is not local, whatever the URL's own host", () => {
    expect(nonLoopbackDatabaseHost('postgres://u@127.0.0.1/db?host=db.example.com')).toBe(
      'db.example.com',
    );
    expect(nonLoopbackDatabaseHost('postgres://u@localhost/db?host=127.0.0.1')).toBeUndefined();
  });
});

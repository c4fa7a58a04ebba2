import { connect, createServer } from 'node:net';
import { refusedConnections } from './loopback-only';

/** The error (or none) a connection to `host:port` ends with. */
function outcome(host: string, port: number): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    socket.once('connect', () => {
      socket.destroy();
      resolve('connected');
    });
    socket.once('error', (error) => resolve(error.message));
  });
}

// The guard (./loopback-only.ts, set up around every spec by jest.config.js) is tested like
// the rest. A TEST-NET-3 address (RFC 5737) stands for a miner's public one.
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

  it('go through to loopback', async () => {
    const server = createServer((socket) => socket.end());
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    const { port } = server.address() as { port: number };
    try {
      expect(await outcome('127.0.0.1', port)).toBe('connected');
      expect(await outcome('localhost', port)).toBe('connected');
    } finally {
      server.close();
    }
    expect(refusedConnections).toEqual([]);
  });
});

import { Socket } from 'node:net';
import { Destination, destinationOf, isLocal } from './connections';

/**
 * Set up around every spec of every tier (jest.config.js): tests talk to 127.0.0.1 and localhost
 * only, and the recorded chain data lists real miners' public addresses. A connection to any
 * other host is refused before it is dialled (the socket fails as an unreachable host would),
 * and the spec then fails, naming it, even where the code under test took the failure in its
 * stride (a miner call counted as failed, say).
 * Node's modules are shared by the specs a worker runs, so the guard is installed once per
 * worker; each spec file checks only the refusals made while it ran.
 */
const GUARD = Symbol.for('validator-gateway.loopbackOnly');

type GuardedSocket = typeof Socket.prototype & { [GUARD]?: string[] };

function where({ host, port }: Destination): string {
  return `${host ?? 'localhost'}:${port ?? '?'}`;
}

function install(): string[] {
  const prototype = Socket.prototype as GuardedSocket;
  const installed = prototype[GUARD];
  if (installed) return installed;
  const refused: string[] = [];
  const connect = prototype.connect;
  prototype.connect = function loopbackOnly(this: Socket, ...args: unknown[]) {
    const destination = destinationOf(args);
    if (isLocal(destination)) return connect.apply(this, args as Parameters<typeof connect>);
    refused.push(where(destination));
    const error = new Error(`${where(destination)}: a test may connect to loopback only`);
    process.nextTick(() => this.destroy(error));
    return this;
  };
  prototype[GUARD] = refused;
  return refused;
}

/** Every connection refused in this worker so far, oldest first (a spec may take its own). */
export const refusedConnections = install();

let before = 0;
beforeAll(() => {
  before = refusedConnections.length;
});
afterAll(() => {
  expect({ refusedConnections: refusedConnections.slice(before) }).toEqual({
    refusedConnections: [],
  });
});

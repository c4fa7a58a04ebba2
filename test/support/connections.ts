import { Socket } from 'node:net';

export interface Destination {
  host: string | undefined;
  port: number | undefined;
  /** A Unix socket path (Postgres on its socket). */
  path: string | undefined;
}

/**
 * Records the destination of every outgoing TCP or Unix socket connection this process opens
 * (HTTP clients, websockets, database drivers all end in `Socket.prototype.connect`), while
 * letting each go through unchanged. `stop` removes the recorder.
 */
export function recordConnections(): { destinations: Destination[]; stop: () => void } {
  const destinations: Destination[] = [];
  const connect = Socket.prototype.connect;
  const spy = jest.spyOn(Socket.prototype, 'connect').mockImplementation(function (
    this: Socket,
    ...args: unknown[]
  ) {
    destinations.push(destinationOf(args));
    return connect.apply(this, args as Parameters<typeof connect>);
  });
  return { destinations, stop: () => spy.mockRestore() };
}

/** Where `Socket.prototype.connect` was asked to connect, from any of its call forms. */
export function destinationOf(args: unknown[]): Destination {
  const [first, second] = args;
  if (Array.isArray(first)) return destinationOf(first);
  if (typeof first === 'object' && first !== null) {
    const options = first as { host?: string; port?: number | string; path?: string };
    return {
      host: options.host,
      port: options.port === undefined ? undefined : Number(options.port),
      path: options.path,
    };
  }
  if (typeof first === 'string' && Number.isNaN(Number(first)))
    return { host: undefined, port: undefined, path: first };
  return {
    host: typeof second === 'string' ? second : undefined,
    port: Number(first),
    path: undefined,
  };
}

/** Loopback, or a local socket: nothing that leaves the machine. */
export function isLocal(destination: Destination): boolean {
  if (destination.path !== undefined) return true;
  const host = (destination.host ?? 'localhost').replace(/^\[(.*)\]$/, '$1');
  return (
    host === 'localhost' ||
    host === '::1' ||
    host.startsWith('127.') ||
    host.startsWith('::ffff:127.') ||
    // The unspecified address, dialled, is this machine.
    host === '0.0.0.0' ||
    host === '::'
  );
}

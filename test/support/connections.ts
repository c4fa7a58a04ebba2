import { isIP, Socket } from 'node:net';
import ipaddr from 'ipaddr.js';

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

/**
 * Loopback, or a local socket: nothing that leaves the machine. Decided on IP literals only
 * (`127.attacker.example` is a name like any other); `localhost` (or no host, which Node takes
 * as localhost) passes here as a name whose resolution ./loopback-only.ts checks when dialled.
 */
export function isLocal(destination: Destination): boolean {
  if (destination.path !== undefined) return true;
  const host = bareHost(destination.host ?? 'localhost');
  return isLoopbackAddress(host) || isLocalhostName(host);
}

/** A host without the brackets of an IPv6 literal in a URL (`[::1]` → `::1`). */
export function bareHost(host: string): string {
  return host.replace(/^\[(.*)\]$/, '$1');
}

/**
 * An IP literal that stays on this machine: the loopback ranges (127.0.0.0/8, ::1), their
 * IPv4-mapped form, or the unspecified address (dialled, it is this machine). A name is not.
 */
export function isLoopbackAddress(host: string): boolean {
  const bare = bareHost(host);
  if (isIP(bare) === 0) return false;
  const range = ipaddr.process(bare).range();
  return range === 'loopback' || range === 'unspecified';
}

/** The one name a test may resolve (and only to loopback addresses). */
export function isLocalhostName(host: string): boolean {
  return /^localhost\.?$/i.test(host);
}

/**
 * Why a database URL given to the tests (TEST_DATABASE_URL, DATABASE_URL) would leave the
 * machine, or undefined when its host is a loopback literal, localhost or a Unix socket.
 */
export function nonLoopbackDatabaseHost(url: string): string | undefined {
  const match = /^[a-z][a-z0-9+.-]*:\/\/(?:[^@/?#]*@)?(\[[^\]]*\]|[^:/?#]*)/i.exec(url);
  const query = url.includes('?') ? url.slice(url.indexOf('?') + 1) : '';
  // Both must be local: pg lets `?host=` win over the URL's own host (`127.0.0.1/db?host=x`).
  const hosts = [match?.[1] || 'localhost', ...new URLSearchParams(query).getAll('host')];
  for (const host of hosts) {
    if (host.startsWith('/')) continue;
    const bare = decodeURIComponent(bareHost(host));
    if (!isLoopbackAddress(bare) && !isLocalhostName(bare)) return bare;
  }
  return undefined;
}

import dgram from 'node:dgram';
import dns, { LookupAddress } from 'node:dns';
import { isIP, LookupFunction, Socket } from 'node:net';
import { join } from 'node:path';
import {
  bareHost,
  Destination,
  destinationOf,
  isLocalhostName,
  isLoopbackAddress,
} from './connections';

/**
 * The loopback guard, without jest: tests talk to 127.0.0.1 and localhost only, and the
 * recorded chain data lists real miners' public addresses. A connection to any other host is
 * refused before it is dialled (the socket fails as an unreachable host would) and recorded.
 * ./loopback-only.ts installs it around every spec (and fails the spec that made a refused
 * connection); ./loopback-preload.js installs it in the processes the tests start.
 *
 * Refused, and recorded:
 * - a TCP connection to an IP literal outside the loopback ranges (not decided on the host
 *   string: `127.attacker.example` is a name);
 * - a TCP connection to a name that resolves to any address outside them, whichever lookup
 *   resolved it (the default or the caller's `lookup` option);
 * - dns.lookup and dns.promises.lookup of any name but localhost (IP literals resolve to
 *   themselves and are answered), so that no name is resolved through the machine's resolver;
 * - every query of the DNS client (dns.resolve*, dns.reverse, their promise forms and the
 *   Resolver classes'), whatever the name: each one asks a DNS server, and a server on loopback
 *   (a local stub resolver) forwards the question on; and dns.lookupService, any address;
 * - a UDP datagram (dgram send or connect) to anywhere but loopback or localhost.
 */
const GUARD = Symbol.for('validator-gateway.loopbackOnly');

type GuardedSocket = typeof Socket.prototype & { [GUARD]?: string[] };

function where({ host, port }: Destination): string {
  return `${host ?? 'localhost'}:${port ?? '?'}`;
}

function refusal(what: string, code = 'ECONNREFUSED'): Error {
  return Object.assign(new Error(`${what}: a test may connect to loopback only`), { code });
}

type LookupCallback = (
  error: Error | null,
  address: string | LookupAddress[],
  family?: number,
) => void;

/** `lookup`, checked: an answer with any address outside loopback fails the connection. */
function checkedLookup(
  lookup: LookupFunction | undefined,
  destination: Destination,
  refused: string[],
): LookupFunction {
  type Resolve = (hostname: string, options: dns.LookupOptions, callback: LookupCallback) => void;
  const checked: Resolve = (hostname, options, callback) => {
    const resolve = lookup ?? dns.lookup;
    resolve(hostname, options, (error, address, family) => {
      if (error) return callback(error, address, family);
      const addresses = Array.isArray(address) ? address.map((one) => one.address) : [address];
      const outside = addresses.find((one) => !isLoopbackAddress(one));
      if (outside === undefined && addresses.length > 0) return callback(null, address, family);
      const what = `${where(destination)} (resolved to ${outside ?? 'nothing'})`;
      refused.push(what);
      callback(refusal(what, 'ENOTFOUND'), '', 4);
    });
  };
  return checked;
}

type ConnectOptions = { host?: string; port?: number; lookup?: LookupFunction };

/** `Socket.prototype.connect`'s arguments with `lookup` replaced in their options. */
function withLookup(args: unknown[], replace: (lookup?: LookupFunction) => LookupFunction) {
  const [first, ...rest] = args;
  if (Array.isArray(first)) {
    // net.createConnection's normalized form: the array (and its marker) is kept.
    const options = first[0] as ConnectOptions;
    first[0] = { ...options, lookup: replace(options.lookup) };
    return args;
  }
  if (typeof first === 'object' && first !== null) {
    const options = first as ConnectOptions;
    return [{ ...options, lookup: replace(options.lookup) }, ...rest];
  }
  // connect(port[, host][, listener])
  const host = typeof rest[0] === 'string' ? rest[0] : undefined;
  const listener = rest.filter((arg) => typeof arg === 'function');
  return [{ port: Number(first), host, lookup: replace() }, ...listener];
}

function guardConnections(refused: string[]): void {
  const prototype = Socket.prototype as GuardedSocket;
  const connect = prototype.connect;
  prototype.connect = function loopbackOnly(this: Socket, ...args: unknown[]) {
    const destination = destinationOf(args);
    const apply = (actual: unknown[]) => connect.apply(this, actual as Parameters<typeof connect>);
    if (destination.path !== undefined) return apply(args);
    const host = bareHost(destination.host ?? 'localhost');
    if (isIP(host) === 0)
      // A name goes wherever its lookup says: the lookup's answer decides.
      return apply(withLookup(args, (lookup) => checkedLookup(lookup, destination, refused)));
    if (isLoopbackAddress(host)) return apply(args);
    refused.push(where(destination));
    const error = refusal(where(destination));
    process.nextTick(() => this.destroy(error));
    return this;
  };
}

/** Names a test may resolve: localhost, and IP literals (which resolve to themselves). */
function resolvable(hostname: unknown): boolean {
  return typeof hostname === 'string' && (isLocalhostName(hostname) || isIP(hostname) !== 0);
}

function lookupRefusal(hostname: unknown, refused: string[]): Error {
  const what = `${String(hostname)} (lookup)`;
  refused.push(what);
  return Object.assign(refusal(what, 'ENOTFOUND'), { hostname });
}

function guardLookups(refused: string[]): void {
  const lookup = dns.lookup;
  dns.lookup = function loopbackLookup(hostname: string, ...rest: unknown[]) {
    if (resolvable(hostname)) return (lookup as (...args: unknown[]) => void)(hostname, ...rest);
    const callback = rest.find((arg) => typeof arg === 'function') as (error: Error) => void;
    const error = lookupRefusal(hostname, refused);
    process.nextTick(() => callback(error));
  } as typeof dns.lookup;
  // util.promisify(dns.lookup) resolves to { address, family } through these.
  for (const symbol of Object.getOwnPropertySymbols(lookup))
    Object.defineProperty(dns.lookup, symbol, Object.getOwnPropertyDescriptor(lookup, symbol)!);
  const promises = dns.promises;
  const promisedLookup = promises.lookup;
  promises.lookup = async function loopbackLookup(hostname: string, ...rest: unknown[]) {
    if (resolvable(hostname))
      return (promisedLookup as (...args: unknown[]) => Promise<unknown>)(hostname, ...rest);
    throw lookupRefusal(hostname, refused);
  } as typeof promises.lookup;
}

/** The DNS client's queries (c-ares), on `dns`, `dns.promises` and both Resolver classes. */
const RESOLVER_METHODS = [
  'resolve',
  'resolve4',
  'resolve6',
  'resolveAny',
  'resolveCaa',
  'resolveCname',
  'resolveMx',
  'resolveNaptr',
  'resolveNs',
  'resolvePtr',
  'resolveSoa',
  'resolveSrv',
  'resolveTxt',
  'reverse',
] as const;

function guardResolvers(refused: string[]): void {
  const refuse = (name: unknown, method: string): Error => {
    const what = `${String(name)} (${method})`;
    refused.push(what);
    return Object.assign(refusal(what), { hostname: name });
  };
  // Each form fails the way its caller waits: the callback on the next tick, or the promise.
  const refusingCallback = (method: string) =>
    function loopbackResolve(name: unknown, ...rest: unknown[]) {
      const callback = rest.find((arg) => typeof arg === 'function') as (error: Error) => void;
      const error = refuse(name, method);
      process.nextTick(() => callback(error));
    };
  const refusingPromise = (method: string) =>
    function loopbackResolve(name: unknown) {
      return Promise.reject(refuse(name, method));
    };
  // The module's functions are the default resolver's methods bound when dns loaded: each of
  // them and the prototypes' are replaced.
  const callbackTargets = [dns, dns.Resolver.prototype] as unknown as Record<string, unknown>[];
  const promiseTargets = [dns.promises, dns.promises.Resolver.prototype] as unknown as Record<
    string,
    unknown
  >[];
  for (const method of RESOLVER_METHODS) {
    for (const target of callbackTargets) target[method] = refusingCallback(method);
    for (const target of promiseTargets) target[method] = refusingPromise(method);
  }
  // A reverse lookup through the machine's resolver: a loopback address missing from
  // /etc/hosts is asked of the DNS server too.
  dns.lookupService = refusingCallback('lookupService') as typeof dns.lookupService;
  dns.promises.lookupService = refusingPromise('lookupService');
}

/** Where a dgram send or connect goes: its first non-numeric string after the message. */
function datagramAddress(args: unknown[], from: number): string | undefined {
  return args
    .slice(from)
    .find((arg): arg is string => typeof arg === 'string' && Number.isNaN(Number(arg)));
}

function guardDatagrams(refused: string[]): void {
  const prototype = dgram.Socket.prototype;
  const guard = <F extends (...args: never[]) => unknown>(original: F, from: number): F =>
    function loopbackDatagram(this: dgram.Socket, ...args: unknown[]) {
      const address = datagramAddress(args, from);
      const local = address === undefined || isLoopbackAddress(address) || isLocalhostName(address);
      if (local) return (original as unknown as (...a: unknown[]) => unknown).apply(this, args);
      const what = `udp ${address}`;
      refused.push(what);
      const error = refusal(what);
      const callback = args.find((arg) => typeof arg === 'function') as
        ((error: Error) => void) | undefined;
      process.nextTick(() => (callback ? callback(error) : this.emit('error', error)));
      return undefined;
    } as unknown as F;
  prototype.send = guard(prototype.send, 1);
  prototype.connect = guard(prototype.connect, 0);
}

/**
 * Installs the guard in this process, once (later calls return the same list): every refusal
 * is recorded in the list returned, oldest first, and handed to `onRefused` when given.
 */
export function installLoopbackGuard(onRefused?: (what: string) => void): string[] {
  const prototype = Socket.prototype as GuardedSocket;
  const installed = prototype[GUARD];
  if (installed) return installed;
  const refused: string[] = [];
  if (onRefused) {
    const record = refused.push.bind(refused);
    refused.push = (...items: string[]) => {
      items.forEach((item) => onRefused(item));
      return record(...items);
    };
  }
  guardConnections(refused);
  guardLookups(refused);
  guardResolvers(refused);
  guardDatagrams(refused);
  prototype[GUARD] = refused;
  return refused;
}

/** How a process started with ./loopback-preload.js reports a refusal: on stderr, one a line. */
export const CHILD_REFUSAL_LINE = 'loopback guard refused: ';

/** `node` arguments that install the guard in a process a test starts, before its script. */
export const GUARDED_NODE_ARGS: readonly string[] = [
  '--require',
  join(__dirname, 'loopback-preload.js'),
];

/**
 * A line of a guarded process's output: when it reports a refusal, adds it to this process's
 * refusals (so that the spec that started the process fails, naming it) and returns it.
 */
export function takeChildRefusal(line: string, pid: number | undefined): string | undefined {
  if (!line.startsWith(CHILD_REFUSAL_LINE)) return undefined;
  const what = `process ${pid ?? '?'}: ${line.slice(CHILD_REFUSAL_LINE.length)}`;
  installLoopbackGuard().push(what);
  return what;
}

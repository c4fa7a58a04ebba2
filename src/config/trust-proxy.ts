import { isIP, isIPv4 } from 'node:net';
import ipaddr from 'ipaddr.js';
import proxyAddr from 'proxy-addr';
import { readEveryEntry } from './list-setting';

/**
 * Express's `trust proxy` setting, in the forms TRUST_PROXY accepts: `false` (the peer is the
 * client: X-Forwarded-For is ignored), a hop count (the nearest N addresses are proxies), or the
 * proxies' addresses, CIDRs and proxy-addr's names (`loopback`, `linklocal`, `uniquelocal`).
 * Express then takes `req.ip` from X-Forwarded-For as far back as the trusted proxies reach.
 */
export type TrustProxy = false | number | string[];

/**
 * Reads TRUST_PROXY as Express reads `trust proxy` (a number is a hop count, a string a
 * comma-separated list), checking the list with proxy-addr, which Express compiles it with, so
 * that what starts is what Express accepts. `true` (trust every peer) is refused: the client's
 * address would then be the leftmost X-Forwarded-For entry, which the client writes itself, and
 * every client could pick the address its failed logins count against.
 */
export function parseTrustProxy(text: string): TrustProxy {
  const value = text.trim();
  if (value === 'false') return false;
  if (value === 'true')
    throw new Error(
      'true would trust X-Forwarded-For from anyone, so any client could choose its own address; ' +
        'give the proxies (addresses, CIDRs, loopback, linklocal, uniquelocal) or their hop count',
    );
  if (/^\d+$/.test(value)) {
    const hops = Number(value);
    if (hops > 64) throw new Error(`${hops} hops: give at most 64 (usually 1, the load balancer)`);
    return hops === 0 ? false : hops;
  }
  const trusted = value.split(',').map((entry) => entry.trim());
  if (trusted.includes(''))
    throw new Error('an empty entry in the list (two commas, or one at an end)');
  try {
    readEveryEntry(trusted, (entry) => {
      refuseUnplainAddress(entry);
      // Before proxy-addr, which says "invalid range" of a /0.
      refuseWholeFamily(entry);
      proxyAddr.compile([entry]);
    });
  } catch (error) {
    throw new Error(
      `${(error as Error).message}: give false, a hop count, or comma-separated addresses, CIDRs, ` +
        'loopback, linklocal or uniquelocal',
    );
  }
  return trusted;
}

/** proxy-addr's names for ranges, which it compiles as their CIDRs. */
const RANGE_NAMES = ['loopback', 'linklocal', 'uniquelocal'];

/**
 * proxy-addr reads addresses as ipaddr.js does, in every notation inet_aton knew: `0x1` was
 * 0.0.0.1 and `010.0.0.1` 8.0.0.1, trusted without a word. An address (and a netmask) is taken
 * only as Node writes one: an IPv4 address in four decimal numbers, or IPv6.
 */
function refuseUnplainAddress(entry: string): void {
  if (RANGE_NAMES.includes(entry)) return;
  const slash = entry.lastIndexOf('/');
  const address = slash === -1 ? entry : entry.slice(0, slash);
  const range = slash === -1 ? '' : entry.slice(slash + 1);
  if (isIP(address) === 0)
    throw new Error(
      `invalid IP address: ${address}` +
        (/^[\da-fx.]+$/i.test(address)
          ? ' (an IPv4 address is four decimal numbers, as 10.0.0.1)'
          : ''),
    );
  // A prefix length in decimal digits, or a netmask as an IPv4 address (`0xff000000` is one to
  // ipaddr.js).
  if (range !== '' && !/^\d+$/.test(range) && !isIPv4(range))
    throw new Error(`invalid range on address: ${entry}`);
}

/**
 * The shortest prefixes a proxy range may have: a /8 (10.0.0.0/8) and IPv6's unique local /7.
 * `0.0.0.0/1,128.0.0.0/1` trusted every IPv4 peer as `true` would, which is refused, so that any
 * client chose the address its failed logins count against (a configuration audit's finding).
 */
const SHORTEST_PREFIX = { 4: 8, 6: 7 } as const;

function refuseWholeFamily(entry: string): void {
  const slash = entry.lastIndexOf('/');
  if (slash === -1) return;
  const address = entry.slice(0, slash);
  const range = entry.slice(slash + 1);
  const prefix = isIPv4(range) ? netmaskBits(range) : Number(range);
  // proxy-addr reads an IPv4-mapped range (`::ffff:0.0.0.0/96`) as the IPv4 one it maps (/0):
  // judged as IPv6, it trusted every IPv4 peer (a review's finding).
  const mapped = isIPv4(address) ? false : ipaddr.IPv6.parse(address).isIPv4MappedAddress();
  const family = isIPv4(address) || mapped ? 4 : 6;
  if ((mapped ? prefix - 96 : prefix) < SHORTEST_PREFIX[family])
    throw new Error(
      `${entry} is wider than a${mapped ? 'n IPv4' : ''} /${SHORTEST_PREFIX[family]}: it takes in public addresses, whose ` +
        'clients could then choose their own address',
    );
}

/** The set bits of an IPv4 netmask (`255.0.0.0`: 8). */
function netmaskBits(netmask: string): number {
  return netmask
    .split('.')
    .map((part) => Number(part).toString(2).replace(/0/g, '').length)
    .reduce((sum, bits) => sum + bits, 0);
}

import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

/**
 * What a client's failed authentications are counted by: an IPv4 address itself, an IPv6
 * address by its /64 (`2001:db8:1:2::/64`). A /64 is the least a site, or a single host, is
 * given: counted per address, one machine sent each guess from a new address of its 2^64 and
 * was never locked out (docs/decisions.md, "An IPv6 client counts by its /64"). An IPv4-mapped
 * address (`::ffff:203.0.113.9`, as a dual-stack socket reports an IPv4 peer) is its IPv4
 * address; a zone id (`fe80::1%eth0`) goes with the rest of the host part. An address a proxy
 * wrote with a port (`203.0.113.7:54321`, `[2001:db8::1]:443`, `[2001:db8::1]`) is the address:
 * each source port was a lockout of its own (docs/decisions.md, "An address written with a port
 * is the address"). Anything that is no address (`unknown`) is kept as it is.
 */
export function lockoutAddress(ip: string): string {
  const address = withoutPort(ip);
  if (!ipaddr.isValid(address)) return ip;
  const parsed = ipaddr.process(address);
  if (parsed.kind() === 'ipv4') return parsed.toString();
  const network = (parsed as ipaddr.IPv6).parts.slice(0, 4);
  return `${new ipaddr.IPv6([...network, 0, 0, 0, 0]).toString()}/64`;
}

const IPV4_WITH_PORT = /^([^:]+):\d{1,5}$/;
const IPV6_IN_BRACKETS = /^\[([^\]]+)\](?::\d{1,5})?$/;

/** `a.b.c.d:port`'s address, `[v6]`'s and `[v6]:port`'s; anything else as it is. */
function withoutPort(written: string): string {
  const v4 = IPV4_WITH_PORT.exec(written)?.[1];
  if (v4 !== undefined && isIP(v4) === 4) return v4;
  const v6 = IPV6_IN_BRACKETS.exec(written)?.[1];
  if (v6 !== undefined && isIP(v6) === 6) return v6;
  return written;
}

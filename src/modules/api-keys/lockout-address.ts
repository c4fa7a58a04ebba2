import ipaddr from 'ipaddr.js';

/**
 * What a client's failed authentications are counted by: an IPv4 address itself, an IPv6
 * address by its /64 (`2001:db8:1:2::/64`). A /64 is the least a site, or a single host, is
 * given: counted per address, one machine sent each guess from a new address of its 2^64 and
 * was never locked out (docs/decisions.md, "An IPv6 client counts by its /64"). An IPv4-mapped
 * address (`::ffff:203.0.113.9`, as a dual-stack socket reports an IPv4 peer) is its IPv4
 * address; a zone id (`fe80::1%eth0`) goes with the rest of the host part. Anything that is no
 * address (`unknown`) is kept as it is.
 */
export function lockoutAddress(ip: string): string {
  if (!ipaddr.isValid(ip)) return ip;
  const address = ipaddr.process(ip);
  if (address.kind() === 'ipv4') return address.toString();
  const network = (address as ipaddr.IPv6).parts.slice(0, 4);
  return `${new ipaddr.IPv6([...network, 0, 0, 0, 0]).toString()}/64`;
}

import ipaddr from 'ipaddr.js';

/** An axon as the chain stores it: the address as a 128-bit integer, its family, the port. */
export interface ChainAxon {
  ip: bigint;
  ipType: number;
  port: number;
}

/**
 * `http://host:port` of an axon, or null when it serves nothing: port 0 or address 0 (what a
 * neuron that never served an axon has), or an address family other than 4 and 6. An address
 * under 2^32 is IPv4 whatever its family says, as the SDK reads it (`AxonInfo`: `int_to_ip`,
 * `netaddr.IPAddress(ip)`, which picks the family by value): the chain accepts such an address
 * served as IPv6, and every validator dials it as IPv4; read as IPv6 (`::c0de:3b6d`), it was
 * no address a miner has, and MINER_ALLOWED_NETWORKS refused it.
 */
export function axonUrl(axon: ChainAxon): string | null {
  if (axon.port === 0 || axon.ip === 0n) return null;
  if ((axon.ipType === 4 || axon.ipType === 6) && axon.ip < 1n << 32n)
    return `http://${ipaddr.fromByteArray(bytesOf(axon.ip, 4)).toString()}:${axon.port}`;
  if (axon.ipType === 6 && axon.ip < 1n << 128n)
    return `http://[${ipaddr.fromByteArray(bytesOf(axon.ip, 16)).toString()}]:${axon.port}`;
  return null;
}

/** Big-endian bytes of `value`, `length` long. */
function bytesOf(value: bigint, length: number): number[] {
  const bytes: number[] = [];
  for (let index = length - 1; index >= 0; index--)
    bytes.push(Number((value >> BigInt(index * 8)) & 0xffn));
  return bytes;
}

import { axonUrl } from './axon-address';

describe('axonUrl', () => {
  it('reads an IPv4 axon as the chain stores it (uid 0 of the finney recording)', () => {
    expect(axonUrl({ ip: 3_235_789_677n, ipType: 4, port: 6028 })).toBe(
      'http://192.222.59.109:6028',
    );
  });

  it('brackets an IPv6 address', () => {
    const ip = BigInt('0x20010db8000000000000000000000001');
    expect(axonUrl({ ip, ipType: 6, port: 8091 })).toBe('http://[2001:db8::1]:8091');
  });

  it('reads an address under 2^32 as IPv4 whatever its ip_type, as the SDK does', () => {
    // bittensor's AxonInfo: ip = int_to_ip(ip) = str(netaddr.IPAddress(ip)), which picks the
    // family by value and never reads ip_type: every validator dials 192.222.59.109.
    expect(axonUrl({ ip: 3_235_789_677n, ipType: 6, port: 6028 })).toBe(
      'http://192.222.59.109:6028',
    );
  });

  it.each([
    ['port 0', { ip: 3_235_789_677n, ipType: 4, port: 0 }],
    ['address 0', { ip: 0n, ipType: 4, port: 8091 }],
    ['an unknown family', { ip: 1n, ipType: 5, port: 8091 }],
    ['an IPv4 value wider than 32 bits', { ip: 1n << 40n, ipType: 4, port: 8091 }],
  ])('is null for %s (serves nothing)', (_, axon) => {
    expect(axonUrl(axon)).toBeNull();
  });
});

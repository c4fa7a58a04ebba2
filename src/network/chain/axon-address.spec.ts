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

  // netaddr reads 2^32 - 1 as IPv4 and 2^32 on as IPv6.
  it('reads an address of ip_type 6 as IPv6 from 2^32 on', () => {
    expect(axonUrl({ ip: (1n << 32n) - 1n, ipType: 6, port: 8091 })).toBe(
      'http://255.255.255.255:8091',
    );
    expect(axonUrl({ ip: 1n << 32n, ipType: 6, port: 8091 })).toBe('http://[::1:0:0]:8091');
  });

  it.each([
    ['port 0', { ip: 3_235_789_677n, ipType: 4, port: 0 }],
    ['address 0', { ip: 0n, ipType: 4, port: 8091 }],
    ['an unknown family', { ip: 1n, ipType: 5, port: 8091 }],
    ['an IPv4 value wider than 32 bits', { ip: 1n << 40n, ipType: 4, port: 8091 }],
    ['an IPv4 value of 2^32', { ip: 1n << 32n, ipType: 4, port: 8091 }],
  ])('is null for %s (serves nothing)', (_, axon) => {
    expect(axonUrl(axon)).toBeNull();
  });
});

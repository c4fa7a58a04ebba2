import { lockoutAddress } from './lockout-address';

describe(lockoutAddress.name, () => {
  it('counts an IPv6 address by its /64, however it is written', () => {
    for (const written of [
      '2001:db8:1:2::abcd:1',
      '2001:db8:1:2::5',
      '2001:DB8:1:2:0:0:0:5',
      '2001:0db8:0001:0002:ffff:ffff:ffff:ffff',
    ])
      expect(lockoutAddress(written)).toBe('2001:db8:1:2::/64');
    expect(lockoutAddress('2001:db8:1:3::5')).toBe('2001:db8:1:3::/64');
    expect(lockoutAddress('2001:db8::1')).toBe('2001:db8::/64');
    expect(lockoutAddress('::1')).toBe('::/64');
  });

  it('drops a zone id with the rest of the host part', () => {
    expect(lockoutAddress('fe80::1%eth0')).toBe('fe80::/64');
    expect(lockoutAddress('fe80::2%1')).toBe('fe80::/64');
  });

  it('counts an IPv4-mapped IPv6 address as its IPv4 address, and an IPv4 address by itself', () => {
    expect(lockoutAddress('::ffff:203.0.113.9')).toBe('203.0.113.9');
    expect(lockoutAddress('::FFFF:cb00:7109')).toBe('203.0.113.9');
    expect(lockoutAddress('203.0.113.9')).toBe('203.0.113.9');
    expect(lockoutAddress('203.0.113.10')).toBe('203.0.113.10');
  });

  it('counts an address a proxy wrote with a port by the address alone', () => {
    expect(lockoutAddress('203.0.113.7:54321')).toBe('203.0.113.7');
    expect(lockoutAddress('203.0.113.7:1')).toBe('203.0.113.7');
    expect(lockoutAddress('[2001:db8:1:2::1]:443')).toBe('2001:db8:1:2::/64');
    expect(lockoutAddress('[2001:db8:1:2::1]')).toBe('2001:db8:1:2::/64');
    expect(lockoutAddress('[::ffff:203.0.113.9]:8080')).toBe('203.0.113.9');
    expect(lockoutAddress('[fe80::1%eth0]:443')).toBe('fe80::/64');
  });

  it('takes a port off only when what is left is an address', () => {
    expect(lockoutAddress('unknown:443')).toBe('unknown:443');
    expect(lockoutAddress('203.0.113.7:')).toBe('203.0.113.7:');
    expect(lockoutAddress('203.0.113.7:port')).toBe('203.0.113.7:port');
    expect(lockoutAddress('[203.0.113.7]:443')).toBe('[203.0.113.7]:443');
    expect(lockoutAddress('[unknown]:443')).toBe('[unknown]:443');
    expect(lockoutAddress('2001:db8::1:443')).toBe('2001:db8::/64');
  });

  it('keeps what is no address as it is', () => {
    expect(lockoutAddress('unknown')).toBe('unknown');
    expect(lockoutAddress('')).toBe('');
  });
});

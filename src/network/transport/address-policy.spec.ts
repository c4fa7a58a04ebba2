import dns, { LookupAddress } from 'node:dns';
import { parseAllowedNetworks } from '../../config/miner-network-settings';
import { AddressPolicy, AddressRefusedError } from './address-policy';

const policyOf = (text: string) => new AddressPolicy(parseAllowedNetworks(text));

/** What `policy.lookup` hands to `net.connect` for `host`: the error, or the addresses. */
function lookUp(
  policy: AddressPolicy,
  host: string,
  all: boolean,
): Promise<{ error: Error | null; address: string | LookupAddress[] }> {
  return new Promise((resolve) =>
    policy.lookup(host, { all }, (error, address) => resolve({ error, address })),
  );
}

describe(AddressPolicy.name, () => {
  describe('public', () => {
    const policy = policyOf('public');

    it.each([
      ['an IPv4 address', '8.8.8.8'],
      ['an IPv6 address', '2606:4700:4700::1111'],
      ['a bracketed IPv6 address', '[2606:4700:4700::1111]'],
      ['a public IPv4 address mapped into IPv6', '::ffff:8.8.8.8'],
    ])('allows %s on the public internet', (_, address) => {
      expect(policy.allows(address)).toBe(true);
    });

    it.each([
      ['loopback', '127.0.0.1'],
      ['loopback elsewhere in 127/8', '127.255.255.254'],
      ['IPv6 loopback', '::1'],
      ['bracketed IPv6 loopback', '[::1]'],
      ['private 10/8', '10.0.0.1'],
      ['private 172.16/12', '172.16.0.1'],
      ['private 192.168/16', '192.168.1.1'],
      ['link-local (the cloud metadata service)', '169.254.169.254'],
      ['IPv6 link-local', 'fe80::1'],
      ['IPv4-compatible IPv6 embedding a private address', '::a00:1'],
      ['carrier-grade NAT', '100.64.0.1'],
      ['documentation TEST-NET-1', '192.0.2.1'],
      ['documentation TEST-NET-2', '198.51.100.1'],
      ['documentation TEST-NET-3', '203.0.113.1'],
      ['IPv6 documentation', '2001:db8::1'],
      ['multicast', '224.0.0.1'],
      ['IPv6 multicast', 'ff02::1'],
      ['unspecified', '0.0.0.0'],
      ['IPv6 unspecified', '::'],
      ['broadcast', '255.255.255.255'],
      ['reserved 240/4', '240.0.0.1'],
      ['benchmarking 198.18/15', '198.18.0.1'],
      ['unique-local fc00::/7', 'fc00::1'],
      ['unique-local fd00::/8', 'fd12:3456::1'],
      ['a private address mapped into IPv6', '::ffff:10.0.0.1'],
      ['loopback mapped into IPv6', '::ffff:127.0.0.1'],
      ['a private address behind NAT64', '64:ff9b::a00:1'],
      ['a private address behind 6to4', '2002:a00:1::'],
      ['a private address behind local-use NAT64 64:ff9b:1::/48', '64:ff9b:1::a00:1'],
      ['site-local fec0::/10 (deprecated, not public)', 'fec0::1'],
      ['IPv6 documentation 3fff::/20', '3fff::1'],
      ['an SRv6 segment identifier 5f00::/16', '5f00::1'],
      ['unassigned IPv6 beside the discard prefix', '100:0:0:1::1'],
      ['unassigned IPv6 above global unicast', '4000::1'],
      ['unassigned IPv6 below unique-local', 'e000::1'],
    ])('refuses %s (%s)', (_, address) => {
      expect(policy.allows(address)).toBe(false);
    });

    it.each(['0x7f000001', '2130706433', '127.1', '017700000001'])(
      'refuses the loopback address written as %s',
      (address) => {
        expect(policy.allows(address)).toBe(false);
      },
    );

    it.each(['', 'not-an-address', 'localhost', '10.0.0.0/8', '1.2.3.4.5'])(
      'refuses %p, which is not an address',
      (text) => {
        expect(policy.allows(text)).toBe(false);
      },
    );

    it('describes itself as public', () => {
      expect(policy.describe()).toBe('public');
    });
  });

  describe('loopback', () => {
    const policy = policyOf('loopback');

    it.each(['127.0.0.1', '127.0.0.53', '::1', '[::1]', '::ffff:127.0.0.1'])(
      'allows %s',
      (address) => {
        expect(policy.allows(address)).toBe(true);
      },
    );

    it.each(['8.8.8.8', '10.0.0.1', '2606:4700:4700::1111', '0.0.0.0', '::'])(
      'refuses %s, public or not',
      (address) => {
        expect(policy.allows(address)).toBe(false);
      },
    );
  });

  describe('CIDR ranges', () => {
    const policy = policyOf('10.0.0.0/8, 2001:db8::/32, 192.168.7.9');

    it.each(['10.0.0.1', '10.255.255.254', '::ffff:10.1.2.3', '2001:db8::1', '192.168.7.9'])(
      'allows %s inside a listed range',
      (address) => {
        expect(policy.allows(address)).toBe(true);
      },
    );

    it.each([
      ['outside every range', '11.0.0.1'],
      ['public but not listed', '8.8.8.8'],
      ['next to a bare address', '192.168.7.10'],
      ['outside the IPv6 range', '2001:db9::1'],
      ['loopback', '127.0.0.1'],
    ])('refuses an address %s (%s)', (_, address) => {
      expect(policy.allows(address)).toBe(false);
    });

    it('does not match an IPv4 range against an IPv6 address with the same bits', () => {
      expect(policy.allows('::a00:1')).toBe(false);
    });

    it('adds the ranges to public unicast when both are listed', () => {
      const combined = policyOf('public, 10.0.0.0/8');

      expect(combined.allows('8.8.8.8')).toBe(true);
      expect(combined.allows('10.0.0.1')).toBe(true);
      expect(combined.allows('192.168.1.1')).toBe(false);
      expect(combined.allows('127.0.0.1')).toBe(false);
      expect(combined.describe()).toBe('public, 10.0.0.0/8');
    });
  });

  describe(AddressPolicy.prototype.permits.name, () => {
    it('checks an IP literal without resolving it', async () => {
      await expect(policyOf('public').permits('127.0.0.1')).resolves.toBe(false);
      await expect(policyOf('public').permits('[::1]')).resolves.toBe(false);
      await expect(policyOf('loopback').permits('[::1]')).resolves.toBe(true);
    });

    it('checks every address a host name resolves to', async () => {
      await expect(policyOf('public').permits('localhost')).resolves.toBe(false);
      await expect(policyOf('10.0.0.0/8').permits('localhost')).resolves.toBe(false);
      await expect(policyOf('loopback').permits('localhost')).resolves.toBe(true);
    });
  });

  describe('a host name resolving to several addresses', () => {
    /** The resolver answers `host` with these addresses (or fails): no DNS server is asked. */
    const resolvesTo = (answer: LookupAddress[] | Error) =>
      jest.spyOn(dns, 'lookup').mockImplementation(((
        _host: string,
        _options: object,
        callback: (error: Error | null, addresses: LookupAddress[]) => void,
      ) => {
        if (answer instanceof Error) callback(answer, []);
        else callback(null, answer);
      }) as unknown as typeof dns.lookup);
    const publicAndPrivate = [
      { address: '8.8.8.8', family: 4 },
      { address: '10.0.0.1', family: 4 },
    ];
    afterEach(() => jest.restoreAllMocks());

    it('is refused when any one of them is outside the policy, not only the first', async () => {
      resolvesTo(publicAndPrivate);

      await expect(policyOf('public').permits('miner.example')).resolves.toBe(false);
      const { error } = await lookUp(policyOf('public'), 'miner.example', false);
      expect(error).toBeInstanceOf(AddressRefusedError);
      expect(error!.message).toBe('miner.example (10.0.0.1) is outside MINER_ALLOWED_NETWORKS');
    });

    it('is refused when it resolves to no address at all', async () => {
      resolvesTo([]);

      await expect(policyOf('public').permits('miner.example')).resolves.toBe(false);
      const { error } = await lookUp(policyOf('public'), 'miner.example', false);
      expect(error).toBeInstanceOf(AddressRefusedError);
    });

    // Unresolvable now is not refused: the connect-time lookup decides once it resolves.
    it('is permitted while it cannot be resolved', async () => {
      resolvesTo(Object.assign(new Error('getaddrinfo ENOTFOUND'), { code: 'ENOTFOUND' }));

      await expect(policyOf('public').permits('miner.example')).resolves.toBe(true);
    });
  });

  describe('lookup', () => {
    it('fails for a host name resolving outside the policy, naming the address', async () => {
      const { error } = await lookUp(policyOf('public'), 'localhost', false);

      expect(error).toBeInstanceOf(AddressRefusedError);
      expect(error).toMatchObject({ code: 'ADDRESS_REFUSED' });
      expect(error!.message).toMatch(/^localhost \((127\.0\.0\.1|::1)\) is outside/);
    });

    it('passes on an allowed address, one or all as net.connect asks', async () => {
      const one = await lookUp(policyOf('loopback'), 'localhost', false);
      const all = await lookUp(policyOf('loopback'), 'localhost', true);

      expect(one.error).toBeNull();
      expect(['127.0.0.1', '::1']).toContain(one.address);
      expect(all.error).toBeNull();
      expect(all.address).toEqual(
        expect.arrayContaining([expect.objectContaining({ address: one.address })]),
      );
    });
  });

  describe('connector', () => {
    it('refuses an IP literal outside the policy without dialling', async () => {
      const connect = policyOf('public').connector(1_000);

      const error = await new Promise<Error | null>((resolve) =>
        connect(
          { hostname: '127.0.0.1', host: '127.0.0.1', protocol: 'http:', port: '9' },
          (...result) => resolve(result[0]),
        ),
      );

      expect(error).toBeInstanceOf(AddressRefusedError);
      expect(error!.message).toBe('127.0.0.1 is outside MINER_ALLOWED_NETWORKS');
    });
  });
});

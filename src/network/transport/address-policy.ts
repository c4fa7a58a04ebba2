import { lookup, LookupAddress, LookupAllOptions } from 'node:dns';
import { isIP, LookupFunction } from 'node:net';
import ipaddr from 'ipaddr.js';
import { buildConnector } from 'undici';
import { AllowedNetworks } from '../../config/miner-network-settings';

/**
 * Where the gateway may connect. Axon addresses come from a public chain: anyone can register
 * 10.0.0.1, 127.0.0.1 or 169.254.169.254 and make a gateway inside a private network call its
 * neighbours. The check is made on the address actually connected to: an IP literal before
 * connecting, a host name on every address it resolves to (one outside refuses them all).
 */
export class AddressPolicy {
  private readonly ranges: [ipaddr.IPv4 | ipaddr.IPv6, number][];

  constructor(private readonly allowed: AllowedNetworks) {
    this.ranges = allowed.cidrs.map((cidr) => ipaddr.parseCIDR(cidr));
  }

  describe(): string {
    return [...(this.allowed.publicUnicast ? ['public'] : []), ...this.allowed.cidrs].join(', ');
  }

  allows(address: string): boolean {
    let parsed: ipaddr.IPv4 | ipaddr.IPv6;
    try {
      parsed = ipaddr.process(address.replace(/^\[|\]$/g, ''));
    } catch {
      return false;
    }
    if (this.allowed.publicUnicast && isPublicUnicast(parsed)) return true;
    return this.ranges.some(
      ([range, bits]) => range.kind() === parsed.kind() && parsed.match(range, bits),
    );
  }

  /** Resolves `host` (an IP literal resolves to itself); true when every address is allowed. */
  async permits(host: string): Promise<boolean> {
    const bare = host.replace(/^\[|\]$/g, '');
    if (isIP(bare)) return this.allows(bare);
    try {
      const addresses = await new Promise<LookupAddress[]>((resolve, reject) =>
        lookup(bare, { all: true }, (error, found) => (error ? reject(error) : resolve(found))),
      );
      return addresses.length > 0 && addresses.every(({ address }) => this.allows(address));
    } catch {
      // Unresolvable now: the connect-time check decides when it resolves.
      return true;
    }
  }

  /** A `net.connect` lookup that fails for a name resolving to any address outside the policy. */
  readonly lookup: LookupFunction = (hostname, options, callback) => {
    lookup(hostname, { ...options, all: true } as LookupAllOptions, (error, addresses) => {
      if (error) return callback(error, '', 4);
      const refused = addresses.find(({ address }) => !this.allows(address));
      if (refused || addresses.length === 0)
        return callback(new AddressRefusedError(hostname, refused?.address), '', 4);
      if (options.all)
        return (callback as unknown as (error: null, all: LookupAddress[]) => void)(
          null,
          addresses,
        );
      callback(null, addresses[0].address, addresses[0].family);
    });
  };

  /** An undici connector that refuses IP literals outside the policy before dialling. */
  connector(timeoutMs: number): buildConnector.connector {
    const connect = buildConnector({ timeout: timeoutMs, lookup: this.lookup });
    return (options, callback) => {
      const host = options.hostname.replace(/^\[|\]$/g, '');
      if (isIP(host) && !this.allows(host)) {
        callback(new AddressRefusedError(host, host), null);
        return;
      }
      connect(options, callback);
    };
  }
}

/**
 * IPv6 global unicast: all the address space IANA hands out for the internet. What ipaddr.js
 * calls unicast also takes in the unassigned rest (`100:0:0:1::`, `4000::`, and the deprecated
 * IPv4-compatible `::a.b.c.d`, which embeds any IPv4 address), routed wherever a local network
 * sends it, never to a public miner.
 */
const IPV6_GLOBAL_UNICAST = ipaddr.parseCIDR('2000::/3');

function isPublicUnicast(address: ipaddr.IPv4 | ipaddr.IPv6): boolean {
  if (address.range() !== 'unicast') return false;
  return address.kind() === 'ipv4' || address.match(IPV6_GLOBAL_UNICAST);
}

export class AddressRefusedError extends Error {
  override readonly name = 'AddressRefusedError';
  readonly code = 'ADDRESS_REFUSED';

  constructor(host: string, address?: string) {
    super(
      `${host}${address && address !== host ? ` (${address})` : ''} is outside MINER_ALLOWED_NETWORKS`,
    );
  }
}

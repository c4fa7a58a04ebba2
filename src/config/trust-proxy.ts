import proxyAddr from 'proxy-addr';

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
    proxyAddr.compile(trusted);
  } catch (error) {
    throw new Error(
      `${(error as Error).message}: give false, a hop count, or comma-separated addresses, CIDRs, ` +
        'loopback, linklocal or uniquelocal',
    );
  }
  return trusted;
}

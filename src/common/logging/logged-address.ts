import { isIP } from 'node:net';
import { SecretScanner } from '../security/secret-scanner';

/** What a request line says in place of a client address that is not one. */
export const NOT_AN_ADDRESS = 'not an address';

const IPV4_WITH_PORT = /^([\d.]+):\d{1,5}$/;
const IPV6_IN_BRACKETS = /^\[([^\]]+)\](?::\d{1,5})?$/;

/**
 * The client's address as a request line may write it: `request.ip`, the peer or, behind
 * TRUST_PROXY, the X-Forwarded-For entry the trusted proxies vouch for, which is text a proxy
 * passed on. Request lines are not scanned for secrets (each value in them is cleared first:
 * logging.module.ts), so only an address is written (as Node or the proxy wrote it, a port
 * included), and anything else as NOT_AN_ADDRESS.
 */
export function loggedAddress(ip: string | undefined, scanner: SecretScanner): string | undefined {
  if (ip === undefined) return undefined;
  const bare = IPV4_WITH_PORT.exec(ip)?.[1] ?? IPV6_IN_BRACKETS.exec(ip)?.[1] ?? ip;
  // An IPv6 zone id (`fe80::1%eth0`) is free text to isIP: checked as any text is.
  return isIP(bare) !== 0 && !scanner.contains(ip) ? ip : NOT_AN_ADDRESS;
}

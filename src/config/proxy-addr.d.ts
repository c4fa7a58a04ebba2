// The `proxy-addr` package (Express's own, behind its `trust proxy` setting) ships no types.
declare module 'proxy-addr' {
  import type { IncomingMessage } from 'node:http';

  type Trust = (address: string, hop: number) => boolean;

  /**
   * The client's address: the nearest address of the request's chain (the socket's peer, then
   * X-Forwarded-For from right to left) that `trust` does not trust.
   */
  function proxyAddr(request: IncomingMessage, trust: Trust | string | string[]): string;

  namespace proxyAddr {
    /**
     * Compiles addresses, CIDRs (`10.0.0.0/8`, `10.0.0.0/255.0.0.0`) and the names `loopback`,
     * `linklocal` and `uniquelocal` into a trust function; throws a TypeError naming the first
     * entry it cannot read (`invalid IP address: …`, `invalid range on address: …`).
     */
    function compile(trusted: string | string[]): Trust;
  }

  export = proxyAddr;
}

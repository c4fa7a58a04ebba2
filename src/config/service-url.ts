import { ValidateBy } from 'class-validator';

/**
 * A URL of one of `protocols` that the clients reading it can take: it parses (a port that is
 * no number did not, and the failure came from the client at start, with the URL, password and
 * all, in its stack; found by an audit), and its user name and password decode (pg and ioredis
 * decode them: a bare `%` threw "URI malformed"), with a host unless `hostOptional` (Postgres'
 * `postgresql:///db?host=/run/postgresql` names a socket instead). The value is never quoted back.
 */
export const IsServiceUrl = (protocols: readonly string[], message: string, hostOptional = false) =>
  ValidateBy({
    name: 'isServiceUrl',
    validator: {
      validate: (value: unknown) => serviceUrlProblem(value, protocols, hostOptional) === undefined,
      // What is wrong, said without the value: "must be a redis:// URL" alone left an operator
      // with a port of 99999 looking at the scheme (a review's finding).
      defaultMessage: (args) =>
        `${message}: ${serviceUrlProblem(args?.value, protocols, hostOptional) ?? 'it is not one'}`,
    },
  });

/** Why `value` is no URL the clients can take, in words that quote none of it; else undefined. */
function serviceUrlProblem(
  value: unknown,
  protocols: readonly string[],
  hostOptional: boolean,
): string | undefined {
  if (typeof value !== 'string') return 'it is no text';
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return (
      'it does not parse as a URL (a port is a number up to 65535; a reserved character in the ' +
      'user name or password is percent-encoded)'
    );
  }
  // Not named: in `gateway:secret@db/x`, written without its scheme, the user name reads as one.
  if (!protocols.includes(url.protocol)) return 'its scheme is another';
  try {
    decodeURIComponent(url.username);
    decodeURIComponent(url.password);
  } catch {
    return 'its user name or password holds a % that begins no escape (write % as %25)';
  }
  if (!hostOptional && url.hostname === '') return 'it names no host';
  return clientSpecificProblem(url);
}

/**
 * What a client reads from the URL beyond its host, checked as the client would read it: ioredis
 * takes the path as the database number (`/abc` sent `SELECT NaN`, and the start died with an
 * unhandled rejection naming no setting; `/1.5` was read as 1), pg a `port` parameter (`?port=abc`
 * died with ERR_SOCKET_BAD_PORT and a stack). Both found by a configuration audit.
 */
function clientSpecificProblem(url: URL): string | undefined {
  if (url.protocol === 'redis:' || url.protocol === 'rediss:') {
    if (!/^\/?\d*$/.test(url.pathname)) return 'its path is no database number (`/0`, `/1`, …)';
    // ioredis takes `?db=` too when the path names none (a review's finding: `?db=abc` died as
    // `/abc` did).
    const db = url.searchParams.get('db');
    if (db !== null && !/^\d+$/.test(db)) return 'its db parameter is no database number';
  }
  const port = url.searchParams.get('port');
  if (port !== null && !/^\d{1,5}$/.test(port)) return 'its port parameter is no number';
  return undefined;
}

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
      validate: (value: unknown) => isServiceUrl(value, protocols, hostOptional),
      defaultMessage: () => message,
    },
  });

function isServiceUrl(
  value: unknown,
  protocols: readonly string[],
  hostOptional: boolean,
): boolean {
  if (typeof value !== 'string') return false;
  try {
    const url = new URL(value);
    decodeURIComponent(url.username);
    decodeURIComponent(url.password);
    return protocols.includes(url.protocol) && (hostOptional || url.hostname !== '');
  } catch {
    return false;
  }
}

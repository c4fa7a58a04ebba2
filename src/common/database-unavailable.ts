/**
 * Retry-After of the 503 `Database unavailable`, whichever of its causes: a wait for a pooled
 * connection that timed out (DATABASE_CONNECT_TIMEOUT_MS, 5 s by default, already spent) or
 * Postgres out of reach (the outage e2e sees it back within seconds of a restart). A fixed few
 * seconds, as the Parquet download's busy 503 is: neither cause says when it will end, and a
 * client retrying at once only queues again on a pool that is full.
 */
export const DATABASE_RETRY_AFTER_SECONDS = 5;

/**
 * Whether an error means "Postgres cannot be reached right now" (as opposed to a bug or a bad
 * query), so that it is answered 503 and retried by the client instead of a 500. Covers the
 * socket errors of node, pg's and pg-pool's own messages, Postgres' connection SQLSTATEs, and
 * the same inside TypeORM's QueryFailedError (`driverError`) or an error's `cause`. TypeORM's
 * two "already released" errors count too: a query runner releases itself when its connection
 * dies, and the next statement of the same save or transaction then raises one of them
 * (QueryRunnerAlreadyReleasedError from the runner, QueryRunnerProviderAlreadyReleasedError
 * from a transaction's entity manager).
 */
export function isDatabaseUnavailable(error: unknown, depth = 0): boolean {
  if (typeof error !== 'object' || error === null || depth > 3) return false;
  const { name, code, message, driverError, cause } = error as {
    name?: unknown;
    code?: unknown;
    message?: unknown;
    driverError?: unknown;
    cause?: unknown;
  };
  if (typeof name === 'string' && RELEASED_RUNNER_ERRORS.has(name)) return true;
  if (typeof code === 'string' && isUnavailableCode(code, message)) return true;
  if (typeof message === 'string' && UNAVAILABLE_MESSAGE.test(message)) return true;
  return isDatabaseUnavailable(driverError, depth + 1) || isDatabaseUnavailable(cause, depth + 1);
}

const RELEASED_RUNNER_ERRORS = new Set([
  'QueryRunnerAlreadyReleasedError',
  'QueryRunnerProviderAlreadyReleasedError',
]);

const SOCKET_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
]);

/**
 * SQLSTATE class 08 (connection exception), 57P01..57P05 (admin/crash shutdown, cannot connect
 * now, idle session timeout), 57014 (statement timeout or cancel: the database is too slow to
 * answer within DATABASE_STATEMENT_TIMEOUT_MS), 53300 (too many connections), and 55000 when a
 * new connection is refused because the database does not accept connections now
 * (`ALLOW_CONNECTIONS false`, as while it is restored or moved). 55000 also names a query's own
 * failures (a sequence's currval before nextval, a table in use), which stay bugs: 500.
 * And the refusals of a new connection to a database renamed or dropped (3D000) or to a role
 * whose password was rotated or whose login was taken away (class 28): raised only as a
 * connection is made, so never a query's bug; the database is out of reach until an operator
 * acts (an operator audit saw them as 500s with stacks, and no outage in the log). At start the
 * same codes are a setting to correct (startup-failure.ts).
 */
function isUnavailableCode(code: string, message: unknown): boolean {
  return (
    SOCKET_CODES.has(code) ||
    code.startsWith('08') ||
    /^57P0[1-5]$/.test(code) ||
    code === '57014' ||
    code === '53300' ||
    code === '3D000' ||
    code.startsWith('28') ||
    (code === '55000' && typeof message === 'string' && NOT_ACCEPTING_CONNECTIONS.test(message))
  );
}

// Postgres' words when the database of a new connection has ALLOW_CONNECTIONS false (a FATAL).
const NOT_ACCEPTING_CONNECTIONS = /^database ".*" is not currently accepting connections$/s;

// pg and pg-pool raise these as plain Errors without a code.
const UNAVAILABLE_MESSAGE =
  /Connection terminated|timeout exceeded when trying to connect|Query read timeout|not queryable|Connection is not established|the database system is (shutting down|starting up|in recovery mode)/i;

/**
 * A wait on Postgres our own bound ended (`within`): unavailable like a pool's wait that timed out,
 * so it is answered 503, never 500.
 */
export class DatabaseTimeoutError extends Error {
  readonly code = 'ETIMEDOUT';
  constructor(what: string, ms: number) {
    super(`${what}: no answer from Postgres within ${ms} ms`);
  }
}

/** An error code as Node and Postgres give them (ECONNREFUSED, 57P01, 28P01): nothing else. */
const ERROR_CODE = /^[A-Z0-9_]{1,32}$/;

/** The check's own timeout (timed-check.ts): says nothing of the database's address. */
const NO_ANSWER = /^no answer within \d+ ms$/;

/**
 * Why health is unhealthy, for any key's holder: the component, and a timeout or the error's
 * code only. The message itself stays in system-status (master key): a connection error names
 * the host and port, an authentication error the user.
 */
export function databaseReason(error: Error): string {
  if (NO_ANSWER.test(error.message)) return `database: ${error.message}`;
  const { code } = error as { code?: unknown };
  const coded = typeof code === 'string' && ERROR_CODE.test(code) ? ` (${code})` : '';
  return `database: the check failed${coded}; system-status has the detail`;
}

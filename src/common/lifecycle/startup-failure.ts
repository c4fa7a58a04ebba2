/**
 * A start-up failure whose cause is known and named by its setting: printed as its one-line
 * message, without a stack (which would say only where Node noticed it).
 */
export class StartupError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StartupError';
  }
}

/** The Postgres and socket errors that mean the database named could not be reached or used. */
const DATABASE_ERROR_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  '3D000', // the database does not exist
  '28000', // no such role, or refused by pg_hba.conf
  '28P01', // wrong password
  '42501', // insufficient privilege
  '53300', // too many connections
  '57P03', // the server is starting up or shutting down
]);

/**
 * A connection URL as it may be shown: its password replaced by `***`, and its query left out
 * (pg also reads `?password=`, `sslpassword`, `sslkey` and more from it).
 */
export function withoutPassword(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    parsed.search = '';
    return parsed.toString();
  } catch {
    return '(not a URL)';
  }
}

function codeOf(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

/** The message of an error, or of the first of an AggregateError (a host's every address failed). */
function messageOf(error: unknown): string {
  if (error instanceof AggregateError && error.errors.length > 0) return messageOf(error.errors[0]);
  if (error instanceof Error && error.message) return error.message;
  return codeOf(error) ?? String(error);
}

/**
 * A failure to reach or use the database at start, as a StartupError naming `setting` (the
 * DATABASE_URL shown without its password, or the embedded Postgres); any other error as is.
 * A connection timeout says so in its message only (pg gives it no code).
 */
export function databaseFailure(error: unknown, setting: string): unknown {
  const code = codeOf(error) ?? codeOf((error as AggregateError | null)?.errors?.[0]);
  const timedOut = error instanceof Error && /connection timeout/i.test(error.message);
  if (!timedOut && (code === undefined || !DATABASE_ERROR_CODES.has(code))) return error;
  return new StartupError(
    `Startup failed: cannot use the database of ${setting}: ${messageOf(error)}`,
  );
}

/** The errors of a server that cannot listen where it was told. */
const LISTEN_ERRORS: Record<string, string> = {
  EADDRINUSE: 'the port is already in use (another process listens on it)',
  EACCES: 'not allowed to listen on this port (ports below 1024 need privileges)',
  EADDRNOTAVAIL: 'the address is not one of this machine’s',
  ENOTFOUND: 'the host name does not resolve',
  EAI_AGAIN: 'the host name does not resolve',
};

/** A failure to listen on HOST:PORT, as a StartupError naming both; any other error as is. */
export function listenFailure(error: unknown, host: string, port: number): unknown {
  const code = codeOf(error);
  const reason = code ? LISTEN_ERRORS[code] : undefined;
  if (!reason) return error;
  return new StartupError(
    `Startup failed: cannot listen on PORT=${port} HOST=${host}: ${reason} (${code})`,
  );
}

import { isDatabaseUnavailable } from '../database-unavailable';

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

/**
 * A database that answers but that this gateway cannot use (a server too old for its
 * migrations), said by the message: databaseFailure names its setting before it.
 */
export class UnusableDatabase extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UnusableDatabase';
  }
}

/**
 * The errors of a database the setting names wrongly or that is not ready for this gateway; the
 * ones of a database that cannot be reached now are isDatabaseUnavailable's (requests answer
 * them 503), so that both know the same list. A database renamed away (3D000) or a role refused
 * (class 28) is in both: a setting to correct at start, an outage once the service runs.
 */
const DATABASE_SETTING_CODES = new Set([
  'ENOTFOUND', // the host name does not resolve
  '3D000', // the database does not exist
  '28000', // no such role, or refused by pg_hba.conf
  '28P01', // wrong password
  '42501', // insufficient privilege
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

/**
 * An Error, of this realm or another: Node's own errors (a TLS refusal) reach jest's sandbox from
 * outside it, where `instanceof Error` is false, and the start's line gave the bare code
 * (UNABLE_TO_VERIFY_LEAF_SIGNATURE) instead of the message the operator reads. The tag test is
 * Node's advice for util.isError; util.types.isNativeError is deprecated, Error.isError not in
 * Node 20.
 */
function isError(value: unknown): value is Error {
  return value instanceof Error || Object.prototype.toString.call(value) === '[object Error]';
}

/**
 * The message of an error, or of the first of an AggregateError (a host's every address failed).
 */
function messageOf(error: unknown): string {
  if (error instanceof AggregateError && error.errors.length > 0) return messageOf(error.errors[0]);
  if (isError(error) && error.message) return error.message;
  return codeOf(error) ?? String(error);
}

/**
 * A failure to reach or use the database at start, as a StartupError naming `setting` (the
 * DATABASE_URL shown without its password, or the embedded Postgres); any other error as is.
 * Unavailable as requests see it (isDatabaseUnavailable: refused, full, shutting down, not
 * accepting connections, pg's connection timeout, which has no code), wrongly named, or
 * unusable by this gateway (UnusableDatabase); and,
 * given the `url`, a certificate file it names that cannot be read. `lead` begins the line (a
 * command beside the service says its own).
 */
export function databaseFailure(
  error: unknown,
  setting: string,
  url?: string,
  lead = 'Startup failed: ',
): unknown {
  const file = url === undefined ? undefined : unreadableCertificateFile(error, url);
  if (file)
    return new StartupError(
      `${lead}cannot use the database of ${setting}: its ${file} cannot be read (${codeOf(error) ?? 'error'})`,
    );
  const first: unknown = error instanceof AggregateError ? error.errors[0] : undefined;
  const code = codeOf(error) ?? codeOf(first);
  const known =
    error instanceof UnusableDatabase ||
    (code !== undefined && DATABASE_SETTING_CODES.has(code)) ||
    isDatabaseUnavailable(error) ||
    isDatabaseUnavailable(first);
  const tls = isTlsFailure(error) || isTlsFailure(first);
  if (!known && !tls) return error;
  return new StartupError(
    `${lead}cannot use the database of ${setting}: ${messageOf(error)}` +
      (tls ? " (TLS: see the URL's sslmode and sslrootcert)" : ''),
  );
}

/**
 * What a command beside the service (the migrations, an erasure) says of a failure on
 * DATABASE_URL's database: databaseFailure's line naming the setting, its password as `***`, or
 * the message of any other error.
 */
export function commandDatabaseFailure(error: unknown, url: string): string {
  const named = databaseFailure(error, `DATABASE_URL=${withoutPassword(url)}`, url, '');
  return named instanceof Error ? named.message : String(named);
}

/** The files pg reads for a connection URL's TLS, from its query. */
const CERTIFICATE_PARAMETERS = ['sslrootcert', 'sslcert', 'sslkey'];

/**
 * `sslrootcert /etc/ca.pem` when the error is the failed read of a certificate file the URL
 * names (pg-connection-string reads them as the first connection is made); else undefined.
 */
function unreadableCertificateFile(error: unknown, url: string): string | undefined {
  const { syscall, path } = (error ?? {}) as { syscall?: unknown; path?: unknown };
  if (syscall !== 'open' || typeof path !== 'string' || !URL.canParse(url)) return undefined;
  const query = new URL(url).searchParams;
  const parameter = CERTIFICATE_PARAMETERS.find((name) => query.get(name) === path);
  return parameter && `${parameter} ${path}`;
}

/**
 * The TLS connection the URL asks for (`sslmode`, `ssl=true`) failed: the server has no TLS (pg
 * says so without a code), or its certificate is not trusted or not for this host (Node's
 * verification codes: pg takes sslmode=require as verify-full, and a managed Postgres's CA is
 * not among Node's). A start-up stack through pg's socket code named no setting.
 */
function isTlsFailure(error: unknown): boolean {
  const code = codeOf(error);
  if (code !== undefined) return TLS_CODE.test(code) || X509_CODES.has(code);
  return error instanceof Error && error.message === 'The server does not support SSL connections';
}

/** Node's TLS and OpenSSL errors. */
const TLS_CODE = /^ERR_(TLS|SSL)_/;

/**
 * The certificate checks' codes (X509_V_ERR_* without the prefix), as Node's TLS documentation
 * lists them, but OUT_OF_MEM: no setting of the URL's. A pattern on CERT missed INVALID_PURPOSE
 * (a server certificate for client use), INVALID_CA and others.
 */
const X509_CODES = new Set([
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_CRL',
  'UNABLE_TO_DECRYPT_CERT_SIGNATURE',
  'UNABLE_TO_DECRYPT_CRL_SIGNATURE',
  'UNABLE_TO_DECODE_ISSUER_PUBLIC_KEY',
  'CERT_SIGNATURE_FAILURE',
  'CRL_SIGNATURE_FAILURE',
  'CERT_NOT_YET_VALID',
  'CERT_HAS_EXPIRED',
  'CRL_NOT_YET_VALID',
  'CRL_HAS_EXPIRED',
  'ERROR_IN_CERT_NOT_BEFORE_FIELD',
  'ERROR_IN_CERT_NOT_AFTER_FIELD',
  'ERROR_IN_CRL_LAST_UPDATE_FIELD',
  'ERROR_IN_CRL_NEXT_UPDATE_FIELD',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'CERT_CHAIN_TOO_LONG',
  'CERT_REVOKED',
  'INVALID_CA',
  'PATH_LENGTH_EXCEEDED',
  'INVALID_PURPOSE',
  'CERT_UNTRUSTED',
  'CERT_REJECTED',
  'HOSTNAME_MISMATCH',
]);

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

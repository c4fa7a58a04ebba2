/**
 * The sslmodes pg 8 takes as verify-full, printing a multi-line SECURITY WARNING on stderr the
 * first time it reads one; pg 9 will take them as libpq does: `require` and `prefer` without
 * verifying the server's certificate, `verify-ca` without its host name.
 */
const VERIFY_FULL_ALIASES = new Set(['require', 'prefer', 'verify-ca']);

/** Whether pg would take the URL's sslmode as an alias of verify-full (and warn). */
function aliasedMode(url: string): string | undefined {
  if (!URL.canParse(url)) return undefined;
  const query = new URL(url).searchParams;
  // With uselibpqcompat=true pg reads sslmode as libpq does, by the URL's own choice.
  if (query.get('uselibpqcompat') === 'true') return undefined;
  return query.getAll('sslmode').find((mode) => VERIFY_FULL_ALIASES.has(mode));
}

/**
 * The URL with an sslmode that pg takes as verify-full written as verify-full: pg's behaviour
 * today (the certificate and its host name verified), which a pg upgrade will not weaken, and
 * without pg's warning. The rest of the URL is left byte for byte (docs/decisions.md,
 * "Start-up").
 */
export function explicitTlsMode(url: string): string {
  if (aliasedMode(url) === undefined) return url;
  return url.replace(/([?&]sslmode=)[^&#]*/g, '$1verify-full');
}

/** The one line that says so, for the start's warnings; undefined when the URL is explicit. */
export function tlsModeWarning(url: string | undefined): string | undefined {
  const mode = url === undefined ? undefined : aliasedMode(url);
  if (mode === undefined) return undefined;
  return (
    `DATABASE_URL: sslmode=${mode} is taken as sslmode=verify-full (pg's meaning of it): the ` +
    "server's certificate is verified, against Node's CA list or the URL's sslrootcert; write " +
    'sslmode=verify-full to say so, or sslmode=no-verify to encrypt without verifying'
  );
}

/** URL parameters any non-empty value of which gives pg its TLS settings (pg-connection-string). */
const URL_TLS_PARAMETERS = ['sslmode', 'sslcert', 'sslkey', 'sslrootcert'];

/**
 * Whether pg takes its TLS settings from the URL rather than from PGSSLMODE: an `ssl` of any
 * value, a non-empty sslmode, sslcert, sslkey or sslrootcert (the last of each, as pg reads
 * them), or sslnegotiation=direct. A URL that does not parse here is taken as setting nothing.
 */
function urlSetsTls(url: string): boolean {
  if (!URL.canParse(url)) return false;
  const query = new URL(url).searchParams;
  const last = (name: string) => query.getAll(name).at(-1);
  return (
    query.has('ssl') ||
    URL_TLS_PARAMETERS.some((name) => Boolean(last(name))) ||
    last('sslnegotiation') === 'direct'
  );
}

/**
 * PGSSLMODE=no-verify where pg obeys it (the URL, or the embedded Postgres's when DATABASE_URL
 * is unset, says nothing of TLS): refused, as it would encrypt without verifying the server's
 * certificate while DATABASE_URL shows nothing of it. The gateway verifies the certificate
 * unless the URL itself says sslmode=no-verify (docs/decisions.md, "Start-up"). The other modes
 * verify it (pg takes them as `ssl: true`) or turn TLS off, as a URL without sslmode does.
 * `pgSslMode` is the variable as pg reads it, untrimmed.
 */
export function pgSslModeProblem(
  url: string | undefined,
  pgSslMode: string | undefined,
): string | undefined {
  if (pgSslMode !== 'no-verify' || (url !== undefined && urlSetsTls(url))) return undefined;
  return (
    "PGSSLMODE: no-verify would have pg encrypt without verifying the database server's " +
    'certificate, which DATABASE_URL does not show; write sslmode=no-verify in DATABASE_URL if ' +
    'that is meant, else unset PGSSLMODE'
  );
}

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

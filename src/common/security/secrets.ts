import type { Request } from 'express';
import { API_KEY_PREFIX } from './api-key-secret';
import { SecretScanner } from './secret-scanner';

/** Issued keys are not known in clear: anything shaped like one counts. */
const ISSUED_KEY = new RegExp(`${API_KEY_PREFIX}[A-Za-z0-9_-]{20,}`);
const ISSUED_KEY_MIN_LENGTH = API_KEY_PREFIX.length + 20;

/**
 * The scanner of this deployment's secrets: the master key, the metrics token, the Gravity
 * repository's token, the credentials in SUBTENSOR_URL, issued keys.
 */
export function secretScannerFor(config: {
  masterKey?: string;
  metricsToken?: string;
  gravity?: { token?: string };
  network?: { subtensor?: { url: string } };
}): SecretScanner {
  return new SecretScanner(
    [
      config.masterKey,
      config.metricsToken,
      config.gravity?.token,
      ...urlCredentials(config.network?.subtensor?.url),
    ],
    ISSUED_KEY,
    ISSUED_KEY_MIN_LENGTH,
  );
}

/**
 * What a node URL may carry as a secret: its password (`wss://user:token@host`), its user when it
 * has no password (`wss://token@host`), and the values of query parameters named as credentials
 * (`?token=…`, `?api_key=…`, as hosted nodes take them), and a path segment that looks like a key
 * (some hosted nodes take it as the path: `wss://…/<key>`). Nothing else: the scanner also refuses
 * requests holding a secret, so a plain user name or `?network=bittensor` must stay out of it.
 * Our own lines name the node by scheme and host only (nodeAddress); this is the last line of
 * defence for a line that names it otherwise.
 */
export function urlCredentials(url: string | undefined): string[] {
  if (!url || !URL.canParse(url)) return [];
  const parsed = new URL(url);
  const user = parsed.password ? parsed.password : parsed.username;
  // Each as written and decoded: the client's lines quote the URL as given (`p%40ss`, a
  // base64 `+`), which holds neither decoded form (`p@ss`; URLSearchParams reads `+` as a space).
  const values = [user, decoded(user)];
  for (const parameter of parsed.search.slice(1).split('&')) {
    const at = parameter.indexOf('=');
    if (at === -1) continue;
    const value = parameter.slice(at + 1);
    if (CREDENTIAL_NAME.test(decoded(parameter.slice(0, at))))
      values.push(value, decoded(value.replace(/\+/g, ' ')));
  }
  for (const segment of parsed.pathname.split('/'))
    if (PATH_KEY.test(segment)) values.push(segment, decoded(segment));
  return [...new Set(values.filter((value) => !!value))];
}

/**
 * A path segment taken for a key: 20 characters or more of a key's alphabet, a digit among them
 * (a UUID, hex, base64url). Route names (`ws`, `public`, `bittensor-finney`) are shorter or have
 * no digit, and must stay out: the scanner refuses requests that hold a secret.
 */
const PATH_KEY = /^(?=[^/]*\d)[\w%.~+=-]{20,}$/;

/** Query parameter names that carry a credential: token, access_token, apikey, api-key, secret, auth, password, … */
const CREDENTIAL_NAME = /token|key|secret|auth|pass|sig/i;

function decoded(value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}

/** Where configureApp leaves the scanner for code outside Nest's injection (Express handlers). */
const LOCALS_KEY = 'secretScanner';

export function attachSecretScanner(locals: Record<string, unknown>, scanner: SecretScanner): void {
  locals[LOCALS_KEY] = scanner;
}

/**
 * Issued keys alone, known by their shape: what a request is refused for before it is
 * authenticated, since finding one tells the client nothing it did not send (a known secret
 * found would tell a guesser it guessed right: refuse-misplaced-secrets.ts).
 */
export const ISSUED_KEY_SCANNER = new SecretScanner([], ISSUED_KEY, ISSUED_KEY_MIN_LENGTH);

/** The app's scanner; without one (an app not set up by configureApp), issued keys only. */
export function secretScannerOf(request: Pick<Request, 'app'>): SecretScanner {
  return (request.app?.locals[LOCALS_KEY] as SecretScanner | undefined) ?? ISSUED_KEY_SCANNER;
}

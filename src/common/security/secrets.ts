import { keyExtractSuri } from '@polkadot/util-crypto';
import type { Request } from 'express';
import { API_KEY_PREFIX } from './api-key-secret';
import { SecretScanner } from './secret-scanner';

/** Issued keys are not known in clear: anything shaped like one counts. */
const ISSUED_KEY = new RegExp(`${API_KEY_PREFIX}[A-Za-z0-9_-]{20,}`);
const ISSUED_KEY_MIN_LENGTH = API_KEY_PREFIX.length + 20;

/** The configuration's secrets a request may be refused for (secretScannerFor). */
interface RequestSecretsConfig {
  masterKey?: string;
  metricsToken?: string;
  gravity?: { token?: string };
  network?: { subtensor?: { url: string } };
}

/**
 * The scanner of what requests are checked for (their URLs, ids and bodies) and error bodies
 * scrubbed of: the master key, the metrics token, the Gravity repository's token, the
 * credentials in SUBTENSOR_URL, issued keys.
 */
export function secretScannerFor(config: RequestSecretsConfig): SecretScanner {
  return new SecretScanner(requestSecrets(config), ISSUED_KEY, ISSUED_KEY_MIN_LENGTH);
}

/**
 * The scanner of log lines and of a failed start's message: secretScannerFor's secrets, and the
 * ones only the process's own output can hold: the passwords of DATABASE_URL and REDIS_URL, the
 * one pg reads from PGPASSWORD (when the URL has none), and VALIDATOR_HOTKEY_URI. Requests are not
 * checked for these: no client is given them, and a refusal would tell a key holder which of its
 * guesses at a database password (often chosen by hand, unlike the master key) was right; and
 * request lines, which skip the scan, cost no more.
 */
export function logScannerFor(
  config: RequestSecretsConfig & {
    databaseUrl?: string;
    databaseEnvPassword?: string;
    redisUrl?: string;
    validatorKey?: { uri?: string };
  },
): SecretScanner {
  return new SecretScanner(
    [
      ...requestSecrets(config),
      ...connectionPasswords(config.databaseUrl),
      ...passwordByValue(config.databaseEnvPassword),
      ...connectionPasswords(config.redisUrl),
      ...validatorKeySecrets(config.validatorKey?.uri),
    ],
    ISSUED_KEY,
    ISSUED_KEY_MIN_LENGTH,
  );
}

function requestSecrets(config: RequestSecretsConfig): (string | undefined)[] {
  return [
    config.masterKey,
    config.metricsToken,
    config.gravity?.token,
    ...urlCredentials(config.network?.subtensor?.url),
  ];
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
  const values = [user, decoded(user), ...queryValues(parsed, CREDENTIAL_NAME)];
  for (const segment of parsed.pathname.split('/'))
    if (PATH_KEY.test(segment)) values.push(segment, decoded(segment));
  return [...new Set(values.filter((value) => !!value))];
}

/**
 * The password of a database's or Redis' URL: in its user info, or in its query (`?password=`,
 * `sslpassword=`: pg and ioredis read both), each as written and decoded. Not one that is a
 * word of letters shorter than 16 characters (`postgres`, `validator`): looked for by value, it
 * would go from every line that names the word; SecretScanner redacts it in the URL, where a
 * client library or a line quoting the URL writes it. The user name is no secret.
 */
export function connectionPasswords(url: string | undefined): string[] {
  if (!url || !URL.canParse(url)) return [];
  const parsed = new URL(url);
  const values = [parsed.password, decoded(parsed.password), ...queryValues(parsed, /pass/i)];
  return [...new Set(values.flatMap(passwordByValue))];
}

/**
 * A password the scanner looks for by value (connectionPasswords' rule): not a word of letters
 * shorter than 16 characters. PGPASSWORD goes through it as given: pg reads it unencoded, and
 * it is in no URL, so a short word there is not redacted at all.
 */
function passwordByValue(value: string | undefined): string[] {
  return value && !SHORT_WORD.test(value) ? [value] : [];
}

/** The config asks 16 characters of its own secrets (MASTER_KEY, METRICS_TOKEN). */
const SHORT_WORD = /^[A-Za-z]{1,15}$/;

/**
 * VALIDATOR_HOTKEY_URI (`<mnemonic or seed>//hard/soft///password`), and its mnemonic or seed
 * and its password alone, as the SDK's parser splits them (keyExtractSuri, which the keypair
 * is made with). Not a development account's (`//Alice`: derived from a published phrase).
 */
function validatorKeySecrets(uri: string | undefined): string[] {
  if (!uri || uri.startsWith('/')) return [];
  let parts: { phrase: string; password?: string };
  try {
    parts = keyExtractSuri(uri);
  } catch {
    // Not a URI the key can be made from: the start refuses it (loadValidatorKey).
    return [uri];
  }
  return [...new Set([uri, parts.phrase, parts.password].filter((part): part is string => !!part))];
}

/**
 * The values of the query parameters whose names (decoded) match `name`, each as written and
 * decoded (URLSearchParams reads `+` as a space).
 */
function queryValues(url: URL, name: RegExp): string[] {
  const values: string[] = [];
  for (const parameter of url.search.slice(1).split('&')) {
    const at = parameter.indexOf('=');
    if (at === -1 || !name.test(decoded(parameter.slice(0, at)))) continue;
    const value = parameter.slice(at + 1);
    values.push(value, decoded(value.replace(/\+/g, ' ')));
  }
  return values;
}

/**
 * A path segment taken for a key: 20 characters or more of a key's alphabet, a digit among them
 * (a UUID, hex, base64url). Route names (`ws`, `public`, `bittensor-finney`) are shorter or have
 * no digit, and must stay out: the scanner refuses requests that hold a secret.
 */
const PATH_KEY = /^(?=[^/]*\d)[\w%.~+=-]{20,}$/;

/**
 * Query parameter names that carry a credential: token, access_token, apikey, api-key, secret,
 * auth, password, …
 */
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

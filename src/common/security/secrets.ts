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
 * What a node URL may carry as a secret: its user and password (`wss://user:token@host`) and its
 * query values (`?token=…`, as hosted nodes take them). Our own lines name the node by scheme and
 * host only (nodeAddress); this is the last line of defence for a line that names it otherwise.
 * Short values (a user name such as `gateway`) are dropped by the scanner.
 */
export function urlCredentials(url: string | undefined): string[] {
  if (!url || !URL.canParse(url)) return [];
  const parsed = new URL(url);
  const values = [parsed.username, parsed.password, ...parsed.searchParams.values()];
  return values.flatMap((value) => (value ? [value, decoded(value)] : []));
}

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

/** The app's scanner; without one (an app not set up by configureApp), issued keys only. */
export function secretScannerOf(request: Pick<Request, 'app'>): SecretScanner {
  return (request.app?.locals[LOCALS_KEY] as SecretScanner | undefined) ?? FALLBACK;
}

const FALLBACK = new SecretScanner([], ISSUED_KEY, ISSUED_KEY_MIN_LENGTH);

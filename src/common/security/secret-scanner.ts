/**
 * Finds secrets in text a client controls or that is about to be written out (a log line, an
 * error body): the known secrets (the master key, the metrics token), and anything shaped like
 * an issued key (`sk_live_…`, a pattern: issued keys are not known in clear). Matching is done
 * on every token of the text after decoding it the ways a client could have encoded it:
 * percent-encoding (repeatedly: double-encoded), base64 and base64url (a header value such as
 * `Basic <base64 of user:key>`), and combinations of the two.
 */
export class SecretScanner {
  private readonly exact: string[];

  constructor(
    secrets: readonly (string | undefined)[],
    private readonly keyPattern: RegExp,
  ) {
    // Short values are no secrets worth the name (and would match everywhere).
    this.exact = secrets.filter((secret): secret is string => !!secret && secret.length >= 8);
  }

  /** True when the text holds a secret in any of the encodings above. */
  contains(text: string): boolean {
    if (text.length < MIN_TOKEN) return false;
    return this.holds(text) || tokensOf(text).some((token) => this.tokenHolds(token));
  }

  /** The text with every token that holds a secret replaced by `[redacted]`. */
  scrub(text: string): string {
    if (text.length < MIN_TOKEN || !this.contains(text)) return text;
    return text.replace(TOKEN, (token) => (this.tokenHolds(token) ? REDACTED : token));
  }

  private tokenHolds(token: string): boolean {
    return decodings(token).some((decoded) => this.holds(decoded));
  }

  private holds(text: string): boolean {
    this.keyPattern.lastIndex = 0;
    return this.exact.some((secret) => text.includes(secret)) || this.keyPattern.test(text);
  }
}

export const REDACTED = '[redacted]';

/** No secret we look for is shorter (issued keys are ~51 characters, the master key ≥ 16). */
const MIN_TOKEN = 8;
/** Runs of the characters keys and their encodings are made of (base64, base64url, %XX). */
const TOKEN = /[A-Za-z0-9%_\-+/=.~:]{8,}/g;

function tokensOf(text: string): string[] {
  return text.match(TOKEN) ?? [];
}

/** The token as sent, percent-decoded (up to 3 times), and base64-decoded (of each of those). */
function decodings(token: string): string[] {
  const percent = [token];
  for (let round = 0; round < 3; round++) {
    const last = percent[percent.length - 1];
    if (!last.includes('%')) break;
    percent.push(percentDecode(last));
  }
  const all = [...percent];
  for (const text of percent) {
    for (const candidate of base64Candidates(text)) {
      const decoded = Buffer.from(candidate, 'base64').toString('latin1');
      all.push(decoded, ...(decoded.includes('%') ? [percentDecode(decoded)] : []));
    }
  }
  return all;
}

/** Lenient: a malformed escape is left as it is, the rest decoded. */
function percentDecode(text: string): string {
  return text.replace(/(?:%[0-9a-f]{2})+/gi, (run) => {
    try {
      return decodeURIComponent(run);
    } catch {
      return Buffer.from(run.replace(/%/g, ''), 'hex').toString('latin1');
    }
  });
}

/**
 * Stretches of the text that may be base64 (either alphabet), long enough to hold a secret:
 * the text split at characters outside the alphabets (`Basic dXNlcjpr…` → `dXNlcjpr…`), each
 * also from its 2nd, 3rd and 4th character (a blob glued to a word: `keyc2tf…`).
 */
function base64Candidates(text: string): string[] {
  const runs = (text.match(/[A-Za-z0-9+/_-]{12,}={0,2}/g) ?? []).map((run) =>
    run.replace(/-/g, '+').replace(/_/g, '/'),
  );
  return runs.flatMap((run) => [0, 1, 2, 3].map((offset) => run.slice(offset)));
}

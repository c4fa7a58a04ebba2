import { bytesOfRun, isUtf8Run } from '../percent-escapes';

/**
 * Finds secrets in text a client controls or that is about to be written out (a log line, an
 * error body): the known secrets (the master key, the metrics token), and anything shaped like
 * an issued key (`sk_live_…`, a pattern: issued keys are not known in clear); what it scrubs
 * also loses any URL's password (withoutUrlPasswords), which is not looked for in requests.
 * Matching is done on every token of the text after decoding it the ways a client could have
 * encoded it: percent-encoding (repeatedly: double-encoded), base64 and base64url (a header value
 * such as `Basic <base64 of user:key>`), and combinations of the two.
 */
export class SecretScanner {
  private readonly exact: string[];
  /**
   * The length of the shortest secret looked for. Every encoding above makes a text longer (a
   * decoded text is never longer than what it was decoded from), so a text, token or base64 run
   * shorter than a secret's length (base64: its encoded length) cannot hold it and is skipped:
   * most of what a request or a log line is made of (`/api/v1/health`, a timestamp).
   */
  private readonly shortest: number;
  private readonly tokens: RegExp;
  /** Every run of PIECE characters of a known secret (holdsPieceOf). */
  private readonly pieces = new Set<string>();

  /** `keyMinLength`: the length of the shortest text `keyPattern` matches. */
  constructor(
    secrets: readonly (string | undefined)[],
    private readonly keyPattern: RegExp,
    keyMinLength: number,
  ) {
    // Short values are no secrets worth the name (and would match everywhere). A secret holding
    // `"`, `\` or a control character is written escaped in a JSON log line (`\"`, `\\`):
    // looked for in that form too.
    this.exact = secrets
      .filter((secret): secret is string => !!secret && secret.length >= MIN_SECRET)
      .flatMap((secret) => {
        const escaped = JSON.stringify(secret).slice(1, -1);
        return escaped === secret ? [secret] : [secret, escaped];
      })
      // Longest first: a secret beginning with `"` is also found inside its escaped form, and
      // replacing it there first would leave a lone `\` before `[redacted]`, a line no longer
      // JSON.
      .sort((a, b) => b.length - a.length);
    this.shortest = Math.max(
      MIN_SECRET,
      Math.min(keyMinLength, ...this.exact.map((secret) => secret.length)),
    );
    this.tokens = new RegExp(`${TOKEN_CHARACTERS}{${this.shortest},}`, 'g');
    for (const secret of secrets)
      if (secret && secret.length >= MIN_SECRET)
        for (let at = 0; at + PIECE <= secret.length; at++)
          this.pieces.add(secret.slice(at, at + PIECE));
  }

  /**
   * True when the text holds PIECE characters in a row of a known secret, as written: a secret
   * cut short (a client pasting most of the master key where a trace id goes) is not found by
   * `contains`, and 63 of a key's 64 hex characters leave 16 guesses (an audit's finding). For
   * what a client sends and the service echoes or logs as it is (a request id, a route word).
   */
  holdsPieceOf(text: string): boolean {
    for (let at = 0; at + PIECE <= text.length; at++)
      if (this.pieces.has(text.slice(at, at + PIECE))) return true;
    return false;
  }

  /** True when the text holds a secret in any of the encodings above. */
  contains(text: string): boolean {
    if (text.length < this.shortest) return false;
    if (this.holds(text)) return true;
    const tokens = text.match(this.tokens);
    return tokens !== null && tokens.some((token) => this.tokenHolds(token));
  }

  /**
   * The text with every token that holds a secret replaced by `[redacted]`, and every URL's
   * password (withoutUrlPasswords).
   */
  scrub(original: string): string {
    const text = withoutUrlPasswords(original);
    if (!this.contains(text)) return text;
    const scrubbed = text.replace(this.tokens, (token) =>
      this.tokenHolds(token) ? REDACTED : token,
    );
    // A secret holding a character no token is made of (`!`, `$`, `*`: a password in
    // SUBTENSOR_URL, a MASTER_KEY) spans tokens, none of which holds it whole: as written, it
    // is replaced where it stands.
    return this.exact.reduce((result, secret) => result.split(secret).join(REDACTED), scrubbed);
  }

  private tokenHolds(token: string): boolean {
    return decodings(token, this.shortest).some((decoded) => this.holds(decoded));
  }

  private holds(text: string): boolean {
    this.keyPattern.lastIndex = 0;
    return this.exact.some((secret) => text.includes(secret)) || this.keyPattern.test(text);
  }
}

export const REDACTED = '[redacted]';

/**
 * A URL's password as written, known or not and however short: in its user info
 * (`//user:password@`, up to the last `@` before the path, as URL parsers read one left
 * unencoded) and in its query (`?password=`, `&sslpassword=`: pg and ioredis read both). A
 * connection's password may be too short, or too common a word (`postgres`), to be looked for
 * by value, but this is where a client library or a line quoting the URL writes it. An escape of
 * a JSON string (`\"`) is part of it; a `"` ends it, as it ends the string. One shown as `***`
 * is hidden already (withoutPassword: a failed start's message names DATABASE_URL so).
 */
const URL_USER_PASSWORD = /\/\/([^\s/?#@:"\\]*):(?!\*+@)(?:[^\s/?#"\\]|\\.)+@/g;
/**
 * Any query parameter: the name is checked apart (PASSWORD_NAME), as `[\w.-]*pass[\w.-]*=` in
 * the pattern backtracks in quadratic time over a long name of many `pass`.
 */
const URL_QUERY_PARAMETER = /([?&][\w.-]+=)((?:[^\s&#"\\]|\\.)*)/g;
const PASSWORD_NAME = /pass/i;

/**
 * The text with URL_USER_PASSWORD and the values of URL_QUERY_PARAMETER named as passwords
 * replaced.
 */
function withoutUrlPasswords(text: string): string {
  // Most lines have no `@` and no `pass`: two searches, no replacement.
  const user = text.includes('@') ? text.replace(URL_USER_PASSWORD, `//$1:${REDACTED}@`) : text;
  if (!PASSWORD_NAME.test(user)) return user;
  return user.replace(URL_QUERY_PARAMETER, (parameter, name: string, value: string) =>
    value && PASSWORD_NAME.test(name) ? `${name}${REDACTED}` : parameter,
  );
}

/**
 * Shorter values are not taken for secrets (issued keys are ~51 characters, the master key ≥ 16).
 */
const MIN_SECRET = 8;
/**
 * The run of a secret's characters holdsPieceOf looks for: the shortest master key or metrics
 * token the service starts with, so a piece of one leaves at least as much unknown as such a
 * key holds, and a random text of a client's shares one only by chance of 62^-16.
 */
const PIECE = 16;
/** The characters keys and their encodings are made of (base64, base64url, %XX). */
const TOKEN_CHARACTERS = '[A-Za-z0-9%_\\-+/=.~:]';

/**
 * The token as sent, percent-decoded (up to 3 times), and base64-decoded (of each of those),
 * skipping base64 stretches too short to decode to `shortest` characters.
 */
function decodings(token: string, shortest: number): string[] {
  const percent = [token];
  for (let round = 0; round < 3; round++) {
    const last = percent[percent.length - 1];
    if (!last.includes('%')) break;
    percent.push(percentDecode(last));
  }
  const all = [...percent];
  for (const text of percent) {
    for (const candidate of base64Candidates(text, Math.ceil((4 * shortest) / 3))) {
      const decoded = Buffer.from(candidate, 'base64').toString('latin1');
      all.push(decoded, ...(decoded.includes('%') ? [percentDecode(decoded)] : []));
    }
  }
  return all;
}

/** Lenient: a malformed escape is left as it is, the rest decoded. */
function percentDecode(text: string): string {
  return text.replace(/(?:%[0-9a-f]{2})+/gi, decodeRun);
}

/**
 * A run of escapes as decodeURIComponent reads it when it is UTF-8; one that is not (`%ff`) is
 * read byte for byte (latin1), so an ASCII secret encoded inside it is still found. Checked
 * first (isUtf8Run) rather than by catching decodeURIComponent's URIError.
 */
function decodeRun(run: string): string {
  return isUtf8Run(run) ? decodeURIComponent(run) : bytesOfRun(run).toString('latin1');
}

/**
 * Stretches of the text that may be base64 (either alphabet), long enough to hold a secret:
 * the text split at characters outside the alphabets (`Basic dXNlcjpr…` → `dXNlcjpr…`), each
 * also from its 2nd, 3rd and 4th character (a blob glued to a word: `keyc2tf…`). At least 11
 * characters before any `=`: the base64 of the shortest secret (8 characters, `cHczNDU2Nzg=`).
 */
function base64Candidates(text: string, minLength: number): string[] {
  const runs = (text.match(/[A-Za-z0-9+/_-]{11,}={0,2}/g) ?? []).map((run) =>
    run.replace(/-/g, '+').replace(/_/g, '/'),
  );
  return runs
    .flatMap((run) => [0, 1, 2, 3].map((offset) => run.slice(offset)))
    .filter((candidate) => candidate.length >= minLength);
}

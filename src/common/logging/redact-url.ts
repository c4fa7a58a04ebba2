import { LRUCache } from 'lru-cache';
import { lruCache } from '../lru-cache';
import { isPercentDecodable } from '../percent-escapes';
import { API_KEY_PREFIX, displayPrefix } from '../security/api-key-secret';
import { REDACTED, SecretScanner } from '../security/secret-scanner';

/** No secret is shorter (the master key and the metrics token need 16 characters at least). */
const SHORTER_THAN_ANY_SECRET = 15;
const KEY_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/**
 * The words routes are made of (`get_top_labels_by_source`): not hex digits alone, which a
 * SHA-256 (a key's stored hash) is, and which a route word of 16 characters or more never is
 * (an audit's finding: a hash beginning with a letter was logged whole).
 */
const ROUTE_WORD = /^(?=[a-z0-9_]*[g-z_])[a-z][a-z0-9_]{0,63}$/;

/**
 * The URL as logged. Everything in it came from the client, so it is kept only where it cannot
 * be a secret in any encoding:
 * - a query parameter keeps its name and value only when each, decoded, is shorter than any
 *   secret (15 characters); longer ones become `[redacted]`;
 * - a path segment is kept when it is that short and the scanner finds no secret in it, or
 *   when it is a route word or a key id (a UUID) and holds neither a secret nor a piece of one;
 *   an issued key in a key path is cut to its display prefix (listed anyway); anything else
 *   becomes `[redacted]`;
 * - what is kept must hold no secret as a whole either, or the URL is only `[redacted]`;
 * - of a URL so redacted, the first LONGEST_LOGGED_URL characters are kept, and the number of
 *   the others said.
 */
export function redactUrl(url: string | undefined, scanner: SecretScanner): string | undefined {
  if (url === undefined) return undefined;
  const clean = cleanUrlsOf(scanner);
  if (clean.has(url)) return url;
  const piecewise = redactedUrl(url, scanner);
  // A secret may be made of pieces short enough to pass one by one (`a/b/c`, `a&b`: MASTER_KEY
  // may hold those characters), so the pieces kept are looked at together too; a URL that
  // still holds one is logged as nothing but `[redacted]` (an audit's finding).
  const redacted =
    scanner.contains(piecewise) || scanner.contains(decode(piecewise)) ? REDACTED : piecewise;
  if (redacted === url && url.length <= LONGEST_REMEMBERED_URL) clean.set(url, true);
  return capped(redacted);
}

/**
 * The most of a URL a log line shows. A URL of many short parameters, up to Node's 16 KB of
 * request line and headers, was logged whole, twice a line (`req.url` and the message): lines
 * of 32 KB, which log shippers split (Docker's json-file driver at 16 KB) into pieces that are
 * not JSON (a review's finding). A thousand characters are far more than the operations' own
 * paths and parameters take.
 */
const LONGEST_LOGGED_URL = 1000;

/**
 * The first LONGEST_LOGGED_URL characters of `url` and how many more there were. Cut after the
 * redaction, which read the whole URL (a secret may begin before the cut and end after it).
 */
function capped(url: string): string {
  if (url.length <= LONGEST_LOGGED_URL) return url;
  // A character of two UTF-16 units (Node reads a URL's bytes as Latin-1, but `originalUrl` may
  // be rewritten) is not split.
  const split = /[\uD800-\uDBFF]/.test(url[LONGEST_LOGGED_URL - 1]);
  const kept = split ? LONGEST_LOGGED_URL - 1 : LONGEST_LOGGED_URL;
  return `${url.slice(0, kept)}… (${url.length - kept} more characters)`;
}

/**
 * URLs found to hold nothing to redact, per scanner (tests build apps with different secrets):
 * most requests repeat a few URLs (`/api/v1/health`). Only such URLs are remembered, never one
 * that held a secret, and only short ones, so the memo holds no secret and stays small.
 */
const CLEAN_URLS = new WeakMap<SecretScanner, LRUCache<string, true>>();
const CLEAN_URLS_REMEMBERED = 1000;
const LONGEST_REMEMBERED_URL = 200;

function cleanUrlsOf(scanner: SecretScanner): LRUCache<string, true> {
  let clean = CLEAN_URLS.get(scanner);
  if (!clean) {
    clean = lruCache(CLEAN_URLS_REMEMBERED);
    CLEAN_URLS.set(scanner, clean);
  }
  return clean;
}

function redactedUrl(url: string, scanner: SecretScanner): string {
  const queryAt = url.indexOf('?');
  const path = queryAt === -1 ? url : url.slice(0, queryAt);
  const segments = path.split('/').map((segment) => redactSegment(segment, scanner));
  if (queryAt === -1) return segments.join('/');
  const query = url
    .slice(queryAt + 1)
    .split('&')
    .map((pair) => {
      const equals = pair.indexOf('=');
      const name = equals === -1 ? pair : pair.slice(0, equals);
      const value = equals === -1 ? undefined : pair.slice(equals + 1);
      const shown = isShort(name, scanner) ? name : REDACTED;
      return value === undefined ? shown : `${shown}=${isShort(value, scanner) ? value : REDACTED}`;
    });
  return `${segments.join('/')}?${query.join('&')}`;
}

function redactSegment(segment: string, scanner: SecretScanner): string {
  const decoded = decode(segment);
  if (decoded.startsWith(API_KEY_PREFIX)) return `${displayPrefix(decoded)}…`;
  if (isShort(segment, scanner)) return segment;
  const plain = ROUTE_WORD.test(segment) || KEY_ID.test(segment);
  return plain && !scanner.contains(segment) && !scanner.holdsPieceOf(segment) ? segment : REDACTED;
}

function isShort(text: string, scanner: SecretScanner): boolean {
  return decode(text).length <= SHORTER_THAN_ANY_SECRET && !scanner.contains(text);
}

/**
 * Fully decoded (double-encoded too), leniently: `+` is a space in a query; a text
 * decodeURIComponent cannot read is left as it is (checked first: catching its URIError for each
 * of 4,000 segments of `%ff` cost tens of milliseconds a request).
 */
function decode(text: string): string {
  let current = text.replace(/\+/g, ' ');
  for (let round = 0; round < 3 && current.includes('%'); round++) {
    if (!isPercentDecodable(current)) break;
    current = decodeURIComponent(current);
  }
  return current;
}

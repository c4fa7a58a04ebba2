import { hash, randomBytes, timingSafeEqual } from 'node:crypto';

export const API_KEY_PREFIX = 'sk_live_';

/**
 * The longest secret a request's header is even looked up with (issued keys are 51 characters):
 * MASTER_KEY and METRICS_TOKEN may not be longer, or they could never be presented.
 */
export const MAX_PRESENTED_SECRET_LENGTH = 256;

/**
 * What a secret sent in a header arrives as, unchanged: printable ASCII, no space at either end.
 * Node trims a header value's ends and reads its bytes as Latin-1, so a MASTER_KEY with an edge
 * space or a character beyond ASCII would never match what a client sends.
 */
export const HEADER_SECRET_FORM = /^[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?$/;
/** How much of a key is kept to show in listings: the prefix and four random characters. */
const DISPLAY_PREFIX_LENGTH = API_KEY_PREFIX.length + 4;

/** 256 random bits, base64url, behind a recognisable prefix (so leaked keys are greppable). */
export function generateApiKey(prefix = API_KEY_PREFIX): string {
  return `${prefix}${randomBytes(32).toString('base64url')}`;
}

export function hashApiKey(key: string): string {
  return secretDigest(key).toString('hex');
}

/**
 * SHA-256 of a secret: fixed length, so comparing two reveals neither content nor length. Runs
 * on every request (the presented key); the one-shot `hash` costs about half of a `Hash` object.
 */
export function secretDigest(secret: string): Buffer {
  return hash('sha256', secret, 'buffer');
}

export function displayPrefix(key: string): string {
  return key.slice(0, DISPLAY_PREFIX_LENGTH);
}

/** Compares fixed-length digests so neither the content nor the length of a secret leaks. */
export function secretsEqual(candidate: string, secret: string): boolean {
  return timingSafeEqual(secretDigest(candidate), secretDigest(secret));
}

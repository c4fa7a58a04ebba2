import { createHash } from 'node:crypto';

/**
 * Finds every trace of the service's secrets in a text: each secret in each encoding a client
 * could have used (secrets.ts plants them so), plus the secrets' hashes. Written independently
 * of the service's own redaction.
 */

export interface Secrets {
  master: string;
  /** A live issued key. */
  issued: string;
  metricsToken: string;
}

export type SecretName = keyof Secrets;
export const SECRET_NAMES: SecretName[] = ['master', 'issued', 'metricsToken'];

export type Encoding =
  | 'raw'
  | 'percent'
  | 'percentAll'
  | 'percentAllUpper'
  | 'double'
  | 'partial'
  | 'base64'
  | 'base64url';
export const ENCODINGS: Encoding[] = [
  'raw',
  'percent',
  'percentAll',
  'percentAllUpper',
  'double',
  'partial',
  'base64',
  'base64url',
];

export function encode(secret: string, encoding: Encoding): string {
  const all = [...Buffer.from(secret)].map((b) => `%${b.toString(16).padStart(2, '0')}`).join('');
  switch (encoding) {
    case 'raw':
      return secret;
    case 'percent':
      return encodeURIComponent(secret);
    case 'percentAll':
      return all;
    case 'percentAllUpper':
      return all.toUpperCase();
    case 'double':
      return all.replace(/%/g, '%25');
    case 'partial':
      return secret.replace(/_/g, '%5F').replace(/-/g, '%2d');
    case 'base64':
      return Buffer.from(secret).toString('base64');
    case 'base64url':
      return Buffer.from(secret).toString('base64url');
  }
}

export interface Leak {
  secret: SecretName;
  form: string;
  where: string;
  excerpt: string;
}

/**
 * Every form in which a secret must never appear: as sent, percent-encoded (each way), double
 * encoded, base64 and base64url (whole, and the part that stays the same whatever surrounds it:
 * a header value such as `user:<key>` encodes it at another alignment), and its SHA-256 (the
 * stored hash of a key).
 */
export function forbiddenForms(secret: string): Map<string, string> {
  const forms = new Map<string, string>();
  for (const encoding of ENCODINGS) forms.set(encoding, encode(secret, encoding));
  forms.set('sha256', createHash('sha256').update(secret, 'utf8').digest('hex'));
  for (const alignment of [0, 1, 2]) {
    const shifted = Buffer.concat([Buffer.alloc(alignment, 0x41), Buffer.from(secret)]);
    for (const alphabet of ['base64', 'base64url'] as const) {
      // Drop the characters that depend on the bytes around the secret.
      const text = shifted.toString(alphabet).replace(/=+$/, '');
      forms.set(`${alphabet}+${alignment}`, text.slice(alignment === 0 ? 0 : 4, text.length - 4));
    }
  }
  return forms;
}

export function findLeaks(
  secrets: Secrets,
  outputs: readonly { where: string; text: string }[],
): Leak[] {
  const leaks: Leak[] = [];
  for (const secret of SECRET_NAMES) {
    for (const [form, text] of forbiddenForms(secrets[secret])) {
      for (const output of outputs) {
        const at = output.text.indexOf(text);
        if (at !== -1)
          leaks.push({
            secret,
            form,
            where: output.where,
            excerpt: output.text.slice(Math.max(0, at - 60), at + text.length + 20),
          });
      }
    }
  }
  return leaks;
}

import { API_KEY_PREFIX, displayPrefix } from '../../modules/api-keys/api-key-secret';

const KEY_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const KEY_LIKE = new RegExp(`${API_KEY_PREFIX}[\\w-]+`, 'g');

/**
 * Key management paths may carry a full key (`/keys/<key>/deactivate`): a key id (a UUID) is
 * kept, an issued key is cut to its display prefix (stored and listed anyway), anything else
 * (the master key, a mistyped secret) is replaced whole. Issued keys elsewhere in the URL (a
 * client putting one in a query string) are cut to their prefix too.
 */
export function redactUrl(url: string | undefined): string | undefined {
  return url
    ?.replace(/(\/keys\/)([^/?#]+)/i, (_match, path: string, key: string) => {
      const kept = KEY_ID.test(key) || key.startsWith(API_KEY_PREFIX);
      return `${path}${kept ? key : '[redacted]'}`;
    })
    .replace(KEY_LIKE, (key) => `${displayPrefix(key)}…`);
}

import { readEveryEntry } from './list-setting';

/**
 * Reads CORS_ORIGINS: comma-separated origins, each written as a browser sends it in `Origin`
 * (`https://app.example.com`, `http://localhost:5173`); an empty entry (two commas, one at an
 * end) names none. The cors package compares the header with each entry as a string, so an
 * entry in another form (a trailing slash, no scheme, a path, capitals, a default port) never
 * matched and CORS was off without a word: such an entry is refused, with the origin it may have
 * meant. A wildcard (`*`, `https://*.example.com`) is refused too: the header is sent only to the
 * listed origins (docs/decisions.md, "OWASP lint of the document"). An entry is named by its place,
 * not shown: it could carry a credential, as a URL can.
 */
export function parseCorsOrigins(text: string): string[] {
  const origins = text
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
  readEveryEntry(origins, (entry, index) => {
    if (entry.includes('*'))
      throw new Error(
        `entry ${index + 1}: no wildcard (*) is taken: list the origins browsers may call from, ` +
          'comma-separated (https://app.example.com)',
      );
    const origin =
      originOf(entry) ?? (entry.includes('://') ? undefined : originOf(`https://${entry}`));
    if (origin !== entry)
      throw new Error(
        `entry ${index + 1} is not an origin as a browser sends it: http(s)://host[:port] in lower ` +
          'case, without a path, a trailing slash or the default port' +
          (origin ? ` (${origin}?)` : ''),
      );
  });
  return origins;
}

/** The origin of an http(s) URL, undefined for anything else. */
function originOf(text: string): string | undefined {
  try {
    const url = new URL(text);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url.origin : undefined;
  } catch {
    return undefined;
  }
}

/**
 * A node URL may carry credentials (`wss://user:token@host`, `?apikey=`): only scheme and host are
 * shown.
 */
export function nodeAddress(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.protocol}//${parsed.host}`;
  } catch {
    return 'the configured node';
  }
}

/** A URL in free text: a scheme and `://`, up to the next space. */
const URL_IN_TEXT = /\b[a-z][a-z0-9+.-]*:\/\/\S*/gi;
/** What ends a sentence or a quotation around a URL (`from ws://…: 1006`), not part of it. */
const TRAILING_PUNCTUATION = /[:;,.!?)\]}'"`>]+$/;

/**
 * The text with every URL in it cut to its scheme and host (nodeAddress): for the chain
 * client's messages, which name the node by its URL as given, credentials and all. The
 * configured URLs are replaced whole first (a query may hold a space); then any other URL, up
 * to the next space (the client may quote a URL normalized, or in part).
 */
export function urlsAsAddresses(text: string, configured: Iterable<string> = []): string {
  let result = text;
  for (const url of configured) result = result.split(url).join(nodeAddress(url));
  return result.replace(URL_IN_TEXT, (url) => {
    const punctuation = TRAILING_PUNCTUATION.exec(url)?.[0] ?? '';
    return nodeAddress(url.slice(0, url.length - punctuation.length)) + punctuation;
  });
}

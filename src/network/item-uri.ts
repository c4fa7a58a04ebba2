import { DataItem, X_HANDLE_CHARACTERS, xHandle } from './protocol';

/**
 * The one uri check every item from a miner passes before it is answered or stored (the item
 * store, a task's items), and the uri's canonical form. Miners are untrusted, and a uri is what
 * clients follow, so it must be the web address of the very record it comes with:
 * - X: `https://x.com/<username>/status/<id>` (twitter.com too), the username the record's
 *   (case-insensitively, without `@`), the id its tweet id. Upstream's validator accepted
 *   twitter.com beside x.com until 2024-12-27 and only x.com since (scraping/x/utils.py,
 *   is_valid_twitter_url): it scores miners, we keep data, and a twitter.com address of the
 *   record's own post names the same post on X's own host, so it is kept, under the x.com form.
 * - Reddit: https on reddit.com or one of its subdomains (upstream accepts any host holding
 *   "reddit.com", which an `evilreddit.com` holds too), `/r/<subreddit>/comments/<post id>/…`
 *   under the record's subreddit, with the record's id (its fullname without `t3_`/`t1_`): a
 *   post's as the post id, a comment's after it. The record's `url` must be the same uri.
 * The canonical form drops the query, the fragment and host variants, so that one post is one
 * uri wherever it is stored (the item store and task items are unique by uri).
 */
export function canonicalUri(item: DataItem): string | undefined {
  let url: URL;
  try {
    url = new URL(item.uri);
  } catch {
    return undefined;
  }
  if (url.protocol !== 'https:' || url.port !== '' || url.username !== '' || url.password !== '')
    return undefined;
  return item.source === 'X' ? xUri(url, item.user.username, item.tweet.id) : redditUri(url, item);
}

/**
 * The longest uri kept, and the longest Reddit author name. Both are keys of btree indexes (the
 * item store's, a task's items), whose entries Postgres caps at 2,704 bytes: one longer key
 * failed the whole statement, and every other item of a stored fetch or a task's collection with
 * it (an audit's finding). Reddit's own addresses: a subreddit of at most 21 characters, base-36
 * ids, and a slug of up to 50 characters of the title, Unicode letters too, which the uri holds
 * percent-encoded (9 characters for a Chinese or Hindi letter, 12 for an emoji): some 700 at
 * most, where 512 refused real comments (a review). Its names are at most 20 characters; 64
 * leaves room for what miners file, such as `[deleted]`. An X uri and handle are bounded by their
 * shape (X_STATUS_PATH). With the longest label (140 characters) and name, an index entry stays
 * near 1,800 bytes.
 */
export const MAX_URI_LENGTH = 1024;
export const MAX_AUTHOR_LENGTH = 64;

/**
 * The item with its uri (and a Reddit item's url) in canonical form; undefined if it disagrees,
 * or when a Reddit author's name is longer than any Reddit gives (MAX_AUTHOR_LENGTH).
 */
export function canonicalItem<T extends DataItem>(item: T): T | undefined {
  const uri = canonicalUri(item);
  if (uri === undefined) return undefined;
  if (item.source === 'REDDIT' && item.username.length > MAX_AUTHOR_LENGTH) return undefined;
  if (uri === item.uri) return item;
  return item.source === 'X' ? { ...item, uri } : { ...item, uri, url: uri };
}

/**
 * What makes two items the same post, whatever their uris' spelling: an X post's tweet id, a
 * Reddit post's or comment's fullname, its kind (`t3_`, `t1_`) from the record's type, whether
 * the id came with its kind or not: `t3_x1y2z3` and `x1y2z3` name the one post the uri names,
 * and were two items of one answer, one uri (an audit's finding). Answers are merged,
 * repeats dropped and corroboration counted on it.
 */
export function itemKey(item: DataItem): string {
  if (item.source === 'X') return `X ${item.tweet.id}`;
  return `REDDIT ${item.dataType === 'post' ? 't3' : 't1'}_${redditShortId(item.id)}`;
}

/** A Reddit id without its kind: what the uri carries. */
function redditShortId(id: string): string {
  return id.replace(/^t\d_/, '');
}

const X_HOSTS = new Set(['x.com', 'www.x.com', 'twitter.com', 'www.twitter.com']);
/**
 * A handle (X_HANDLE_CHARACTERS), and a post id as X writes it: no leading zero.
 * `/status/0123…` with a real post's digits after the 0 has its time (x-post-id.ts) but another
 * key and uri: a second copy of the post in one answer.
 */
const X_STATUS_PATH = new RegExp(`^/(${X_HANDLE_CHARACTERS})/status/([1-9]\\d{0,19})/?$`);

function xUri(url: URL, username: string, tweetId: string): string | undefined {
  if (!X_HOSTS.has(url.hostname)) return undefined;
  const match = X_STATUS_PATH.exec(url.pathname);
  if (!match || match[2] !== tweetId) return undefined;
  const handle = xHandle(username);
  if (match[1].toLowerCase() !== handle.toLowerCase()) return undefined;
  // The record's spelling: honest records of one post agree on it, uris may not.
  return `https://x.com/${handle}/status/${tweetId}`;
}

function redditUri(url: URL, item: Extract<DataItem, { source: 'REDDIT' }>): string | undefined {
  if (item.url !== item.uri) return undefined;
  if (url.hostname !== 'reddit.com' && !url.hostname.endsWith('.reddit.com')) return undefined;
  const segments = url.pathname.split('/').filter((segment) => segment !== '');
  const [r, subreddit, comments, postId, ...rest] = segments;
  const community = item.communityName.replace(/^r\//i, '').toLowerCase();
  if (r !== 'r' || subreddit?.toLowerCase() !== community || comments !== 'comments')
    return undefined;
  const id = redditShortId(item.id);
  const named = item.dataType === 'post' ? postId === id : rest.includes(id);
  if (!named || segments.some((segment) => !/^[\w%.~-]+$/.test(segment))) return undefined;
  // ASCII by the pattern above: its length is its size in bytes.
  const canonical = `https://www.reddit.com/${segments.join('/')}/`;
  return canonical.length <= MAX_URI_LENGTH ? canonical : undefined;
}

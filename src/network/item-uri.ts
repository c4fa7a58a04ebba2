import { DataItem } from './protocol';

/**
 * The one uri check every item from a miner passes before it is answered or stored (the item
 * store, a task's items): miners are untrusted, and a uri is what clients follow. The uri is
 * the record's own url (the conversion takes it from there, and Reddit items carry it twice);
 * it must also be a web address naming the item: an X post's `/status/<id>` is its tweet id, a
 * Reddit url holds the post's or comment's id.
 */
export function uriAgrees(item: DataItem): boolean {
  let url: URL;
  try {
    url = new URL(item.uri);
  } catch {
    return false;
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return false;
  if (item.source === 'X') {
    const status = /\/status\/(\d+)/.exec(url.pathname)?.[1];
    return status === item.tweet.id;
  }
  return item.url === item.uri && url.pathname.split('/').includes(item.id.replace(/^t\d_/, ''));
}

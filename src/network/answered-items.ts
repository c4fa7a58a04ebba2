import { pythonIsoDate } from '../common/python-json';
import { DataItem } from './protocol';

/**
 * An item as the gateway answers it (an on-demand query's `data`, query_bucket's, a dataset's
 * JSON lines). Its
 * dates (`datetime`, and a Reddit item's `createdAt`) as the subnet's hosted API writes them:
 * Python's `datetime.isoformat()` of a UTC time, `2026-11-20T14:03:51+00:00`, with a fraction
 * only when there is one (`.436000`). Not `toISOString()`'s `…51.000Z`, which
 * `datetime.fromisoformat` refuses before Python 3.11, the subnet's own 3.10 among them
 * (docs/decisions.md, "Items in the hosted API's shape"). Inside the gateway items keep
 * `toISOString()`'s form; a date already in this one comes out the same.
 */
export function answeredItem(item: DataItem): DataItem {
  const datetime = hostedDate(item.datetime);
  // A record's empty list of media is answered as none, `null`, as the README says and an
  // earlier shape's converted rows answer it (legacy-items.ts); it came out `[]`.
  const media = item.media?.length === 0 ? null : item.media;
  return item.source === 'X'
    ? { ...item, datetime, media }
    : { ...item, datetime, createdAt: hostedDate(item.createdAt), media };
}

/** A date that does not parse (none should: every item's dates are checked) is left as it is. */
function hostedDate(text: string): string {
  const time = new Date(text);
  return Number.isNaN(time.getTime()) ? text : pythonIsoDate(time);
}

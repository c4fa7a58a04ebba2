import { xPostTime } from '../../../network/x-post-id';
import { QUERY_RESPONSE_EXAMPLES } from './data-query.examples';
import { XItemDto } from './x-item.dto';

// The gateway drops an X post dated away from the minute its id holds: the documented example
// must be an item it would answer with.
describe('the documented on-demand answers', () => {
  const xItems = Object.values(QUERY_RESPONSE_EXAMPLES)
    .flatMap((example) => (example.value as { data?: unknown[] }).data ?? [])
    .filter((item): item is XItemDto => (item as { source?: string }).source === 'X');

  it('hold an X post whose id holds its time, to the minute', () => {
    expect(xItems.length).toBeGreaterThan(0);
    for (const item of xItems) {
      const posted = xPostTime(item.tweet.id);
      expect(posted).toBeDefined();
      expect(Math.floor(posted!.getTime() / 60_000)).toBe(
        Math.floor(Date.parse(item.datetime) / 60_000),
      );
      expect(item.uri.endsWith(`/status/${item.tweet.id}`)).toBe(true);
    }
  });
});

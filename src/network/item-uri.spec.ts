import { uriAgrees } from './item-uri';
import { DataItem } from './protocol';

const xItem = (uri: string, id: string) =>
  ({ source: 'X', uri, tweet: { id } }) as unknown as DataItem;

describe('uriAgrees', () => {
  it('wants an X uri to be a web address carrying the tweet id as its status', () => {
    expect(uriAgrees(xItem('https://x.com/a/status/12', '12'))).toBe(true);
    expect(uriAgrees(xItem('https://x.com/a/status/12', '13'))).toBe(false);
    expect(uriAgrees(xItem('not a url', '12'))).toBe(false);
    expect(uriAgrees(xItem('javascript:alert(1)//x.com/a/status/12', '12'))).toBe(false);
  });
});

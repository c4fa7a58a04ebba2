import { NetworkService } from '../../src/network/network.service';
import { createKey } from '../support/fixtures';
import { syncIndexNow } from '../support/index-sync';
import { startTestNetwork, TestNetwork } from '../support/network';
import { startTestApp, TestApp } from '../support/test-app';

/** As stats.e2e-spec.ts: syncs when asked, and leaves query_bucket the miners' calls. */
const MANUAL_SYNC = {
  INDEX_SYNC_ON_START: 'false',
  VALIDATOR_SHARES_HOTKEY: 'false',
  INDEX_SPOT_CHECK_RESERVE: '0',
};
const WEAK_TAG = /^W\/"[0-9a-f]{32}"$/;
/** The statistics operations answered from the aggregates, and query_bucket. */
const PATHS = [
  'get_top_labels_by_source/x',
  'ages?source=x',
  'get_bytes_by_label?label=%23bitcoin',
  'query_bucket/x?label=%23bitcoin',
];

describe('Conditional requests to the statistics', () => {
  let network: TestNetwork;
  let app: TestApp;
  let key: string;

  beforeAll(async () => {
    network = await startTestNetwork([{}, {}]);
    app = await startTestApp({ ...network.env, ...MANUAL_SYNC }, { ownDatabase: true });
    await syncIndexNow(app);
    ({ key } = await createKey(app));
  });
  afterAll(async () => {
    await app.close();
    await network.stop();
  });

  const get = (path: string, ifNoneMatch?: string) => {
    const request = app.http.get(`/api/v1/${path}`).set('X-API-Key', key);
    return ifNoneMatch === undefined ? request : request.set('If-None-Match', ifNoneMatch);
  };
  /**
   * The answer's tag once it stands: query_bucket's first answer fetches from a miner (`cached`
   * false), the next ones answer from that fetch; the fetch moves the miner's credibility, and
   * with it the aggregates, once the recorder has written it.
   */
  async function settledTag(path: string): Promise<string> {
    await get(path).expect(200);
    await app.app.get(NetworkService).settled();
    const response = await get(path).expect(200);
    return response.headers.etag;
  }

  it('tags each answer weakly, to be revalidated each time, and answers 304 without the body while If-None-Match names it', async () => {
    for (const path of PATHS) {
      const tag = await settledTag(path);
      const first = await get(path).expect(200);
      expect(first.headers.etag).toBe(tag);
      expect(tag).toMatch(WEAK_TAG);
      expect(first.headers['cache-control']).toBe('private, no-cache');

      const again = await get(path, tag).expect(304);
      expect(again.text ?? '').toBe('');
      expect(again.headers.etag).toBe(tag);
      expect(again.headers['cache-control']).toBe('private, no-cache');
      // A 304 is a request the key made: it counts against its rate limit.
      expect(Number(again.headers['x-ratelimit-remaining'])).toBe(
        Number(first.headers['x-ratelimit-remaining']) - 1,
      );
    }
  });

  it('answers 304 to a list naming the answer, to *, and to its tag without W/ (weak comparison), 200 to others', async () => {
    for (const path of PATHS) {
      const tag = await settledTag(path);
      await get(path, `"other", W/"more",${tag}`).expect(304);
      await get(path, '*').expect(304);
      await get(path, tag.slice(2)).expect(304);
      // Decided by the service alone: Express's own check (req.fresh, off) sends this one a 200.
      const noCache = await get(path, tag).set('Cache-Control', 'no-cache').expect(304);
      expect(noCache.headers.etag).toBe(tag);
      const other = await get(path, 'W/"0123456789abcdef0123456789abcdef", "other"').expect(200);
      expect(other.headers.etag).toBe(tag);
      expect(other.text.length).toBeGreaterThan(0);
      // No list of entity tags names nothing (entity-tags.ts): a 200, though Express's own check,
      // which splits at commas and spaces, finds the tag in it.
      const malformed = await get(path, `"x" junk, ${tag}`).expect(200);
      expect(malformed.text.length).toBeGreaterThan(0);
    }
  });

  it('tags different requests apart, and the same request normalized alike', async () => {
    const tags = [
      'get_top_labels_by_source/x',
      'get_top_labels_by_source/reddit',
      'ages?source=x',
      'ages?source=reddit',
      'get_bytes_by_label?label=%23bitcoin',
      'get_bytes_by_label?label=%23ethereum',
    ];
    const etags = [];
    for (const path of tags) etags.push((await get(path).expect(200)).headers.etag);
    expect(new Set(etags).size).toBe(tags.length);
    expect((await get('get_top_labels_by_source/%20X%20').expect(200)).headers.etag).toBe(etags[0]);
    expect((await get('get_bytes_by_label?label=%20%23BitCoin').expect(200)).headers.etag).toBe(
      etags[4],
    );
  });

  it('retags the aggregates’ answers once an index sync changed them', async () => {
    const paths = PATHS.slice(0, 3);
    const before = [];
    for (const path of paths) before.push((await get(path).expect(200)).body as unknown);
    const tags = [];
    for (const path of paths) tags.push(await settledTag(path));
    // Miner 0 now claims twice its sizes: its index, and the totals, change at the next sync.
    network.devnet.setBehaviour(0, { overclaimSizes: 2, endpoints: ['GetMinerIndex'] });
    try {
      await syncIndexNow(app);
    } finally {
      network.devnet.setBehaviour(0, {});
    }
    for (const [index, path] of paths.entries()) {
      const after = await get(path, tags[index]).expect(200);
      expect(after.headers.etag).toMatch(WEAK_TAG);
      expect(after.headers.etag).not.toBe(tags[index]);
      expect(after.body).not.toEqual(before[index]);
    }
  });

  it('refuses an If-None-Match longer than 1024 characters with a 422 at the header', async () => {
    const response = await get('ages?source=x', `"${'a'.repeat(1023)}"`).expect(422);
    expect(response.body.detail).toEqual([
      expect.objectContaining({ loc: ['header', 'if-none-match'], type: 'string_too_long' }),
    ]);
  });
});

import { bucketStart } from '../protocol';
import { wireBucketId } from '../sn13/messages';
import {
  bucketOfWireId,
  checkContents,
  checkEntities,
  deliveriesToKeep,
  MAX_CONTENT_BYTES,
  MAX_CONTENTS_PER_ANSWER,
} from './contents-check';

const HOUR = 490_000;
const TAO = { source: 2 as const, label: '#tao', timeBucket: HOUR };
const SUBREDDIT = { source: 1 as const, label: 'r/bittensor', timeBucket: HOUR };
const minute = (offset: number) =>
  new Date(bucketStart(HOUR).getTime() + offset * 60_000).toISOString();

/** An `XContent` record as a miner stores it (compact JSON, time rounded to the minute). */
function tweet(id: number, overrides: Record<string, unknown> = {}): string {
  return JSON.stringify({
    username: 'alice',
    text: `post ${id} #TAO`,
    url: `https://x.com/alice/status/${id}`,
    timestamp: minute(id % 60),
    tweet_hashtags: ['#TAO', '#bittensor'],
    tweet_id: String(id),
    ...overrides,
  });
}

/** A `RedditContent` record by alias. */
function post(id: string, overrides: Record<string, unknown> = {}): string {
  return JSON.stringify({
    id: `t3_${id}`,
    url: `https://www.reddit.com/r/Bittensor/comments/${id}/a_title/`,
    username: 'bob',
    communityName: 'r/Bittensor',
    body: 'body',
    createdAt: minute(5),
    dataType: 'post',
    title: 'a title',
    parentId: null,
    ...overrides,
  });
}

const bytes = (...contents: string[]) =>
  contents.reduce((sum, content) => sum + Buffer.byteLength(content), 0);

describe(checkContents.name, () => {
  it('keeps a post whose first tag is over 140 code points in the bucket of its cut label', () => {
    const astral = '\u{1D41B}';
    const content = tweet(3, { tweet_hashtags: [`#${astral.repeat(150)}`] });
    const bucket = { ...TAO, label: `#${astral.repeat(139)}` };
    const checked = checkContents(
      [{ bucket, claimedBytes: bytes(content) }],
      [{ bucketId: wireBucketId(bucket), contents: [content] }],
    );
    expect(checked.deliveries[0]?.items).toHaveLength(1);
  });

  it('keeps well-formed records of the bucket, with their true sizes', () => {
    const contents = [tweet(1), tweet(2)];
    const checked = checkContents(
      [{ bucket: TAO, claimedBytes: bytes(...contents) }],
      [{ bucketId: wireBucketId(TAO), contents }],
    );
    expect(checked.deliveries).toHaveLength(1);
    const [delivery] = checked.deliveries;
    expect(delivery.items.map((entry) => entry.item.uri)).toEqual([
      'https://x.com/alice/status/1',
      'https://x.com/alice/status/2',
    ]);
    expect(delivery.items[0]).toMatchObject({ timeBucket: HOUR, contentBytes: bytes(tweet(1)) });
    expect(delivery).toMatchObject({
      returned: 2,
      dropped: 0,
      bytes: bytes(...contents),
      score: 1,
    });
    expect(checked).toMatchObject({ returned: 2, dropped: 0, score: 1, problems: [] });
  });

  it('drops contents outside the hour, under another label, malformed, oversize or repeated', () => {
    const good = tweet(1);
    const bad = [
      tweet(2, { timestamp: new Date(bucketStart(HOUR + 1).getTime()).toISOString() }),
      tweet(3, { timestamp: new Date(bucketStart(HOUR).getTime() - 60_000).toISOString() }),
      tweet(4, { tweet_hashtags: ['#bittensor', '#tao'] }),
      tweet(5, { tweet_hashtags: [] }),
      '{"username": "alice"',
      JSON.stringify({ text: 'no url' }),
      42,
      tweet(6, { text: 'x'.repeat(MAX_CONTENT_BYTES) }),
      good,
    ];
    const checked = checkContents(
      [{ bucket: TAO, claimedBytes: bytes(good) }],
      [{ bucketId: wireBucketId(TAO), contents: [good, ...bad] }],
    );
    expect(checked.deliveries[0].items).toHaveLength(1);
    expect(checked).toMatchObject({ returned: 10, dropped: 9 });
    expect(checked.score).toBeCloseTo(0.1);
    expect(checked.problems).toEqual([`9 of 10 contents do not belong to bucket ${HOUR} #tao`]);
  });

  // An audit's finding: a real post re-dated into the bucket's hour was kept, and filed under a
  // newer hour it hid the honest row of its own hour (the store answers the newest row of a uri).
  it("drops an X post dated in the bucket's hour when its id holds another time", () => {
    const id = '1795757939487670279'; // posted 2024-05-29T10:03:51Z
    const own = { ...TAO, timeBucket: Math.floor(Date.parse('2024-05-29T10:03:51Z') / 3_600_000) };
    const record = (timestamp: string) =>
      JSON.stringify({
        ...JSON.parse(tweet(1)),
        url: `https://x.com/alice/status/${id}`,
        tweet_id: id,
        timestamp,
      });
    const redated = record(minute(0));
    const honest = record('2024-05-29T10:03:00Z');
    const checked = checkContents(
      [
        { bucket: TAO, claimedBytes: bytes(redated) },
        { bucket: own, claimedBytes: bytes(honest) },
      ],
      [
        { bucketId: wireBucketId(TAO), contents: [redated] },
        { bucketId: wireBucketId(own), contents: [honest] },
      ],
    );
    expect(checked.deliveries.map((delivery) => delivery.items.length)).toEqual([0, 1]);
    expect(checked.deliveries[0]).toMatchObject({ returned: 1, dropped: 1, score: 0 });
  });

  it('drops records whose uri does not name the item', () => {
    const checked = checkContents(
      [{ bucket: TAO, claimedBytes: 0 }],
      [
        {
          bucketId: wireBucketId(TAO),
          contents: [
            tweet(1, { tweet_id: '999' }),
            tweet(2, { url: 'ftp://x.com/alice/status/2' }),
            tweet(3, { url: 'https://evil.example/alice/status/3' }),
            tweet(4, { url: 'https://x.com/mallory/status/4' }),
            post('p5', { url: 'https://evilreddit.com/r/Bittensor/comments/p5/' }),
          ],
        },
      ],
    );
    expect(checked.dropped).toBe(5);
  });

  it('keeps one post whatever its uri spelling, under the canonical uri', () => {
    const checked = checkContents(
      [{ bucket: TAO, claimedBytes: 0 }],
      [
        {
          bucketId: wireBucketId(TAO),
          contents: [
            tweet(7, { url: 'https://twitter.com/alice/status/7?s=20' }),
            tweet(7, { url: 'https://x.com/ALICE/status/7' }),
            tweet(7),
          ],
        },
      ],
    );
    expect(checked.deliveries[0].items.map(({ item }) => item.uri)).toEqual([
      'https://x.com/alice/status/7',
    ]);
    expect(checked.dropped).toBe(2);
  });

  it('files a cashtag-first post under its hashtag, and Reddit items under their subreddit', () => {
    const cash = tweet(1, { tweet_hashtags: ['$TAO'] });
    const reddit = post('abc12');
    expect(
      checkContents(
        [{ bucket: TAO, claimedBytes: bytes(cash) }],
        [{ bucketId: wireBucketId(TAO), contents: [cash] }],
      ).dropped,
    ).toBe(0);
    const checked = checkContents(
      [{ bucket: SUBREDDIT, claimedBytes: bytes(reddit) }],
      [
        {
          bucketId: wireBucketId(SUBREDDIT),
          contents: [
            reddit,
            post('def34', { communityName: 'r/other' }),
            post('zz', { id: 't3_other' }),
          ],
        },
      ],
    );
    expect(checked.deliveries[0].items.map((entry) => entry.item.uri)).toEqual([
      'https://www.reddit.com/r/Bittensor/comments/abc12/a_title/',
    ]);
    expect(checked.dropped).toBe(2);
  });

  it('drops everything under a bucket id that was not asked for, and scores it down', () => {
    const other = { ...TAO, timeBucket: HOUR + 1 };
    const contents = [tweet(1)];
    const checked = checkContents(
      [{ bucket: TAO, claimedBytes: bytes(...contents) }],
      [
        { bucketId: wireBucketId(TAO), contents },
        { bucketId: wireBucketId(other), contents: [tweet(2), tweet(3), tweet(4)] },
        { bucketId: 'nonsense', contents: [] },
      ],
    );
    expect(checked.deliveries[0].items).toHaveLength(1);
    expect(checked).toMatchObject({ returned: 4, dropped: 3 });
    expect(checked.score).toBeCloseTo(0.25);
  });

  it('merges a bucket echoed twice, keeping one item per uri', () => {
    const checked = checkContents(
      [{ bucket: TAO, claimedBytes: bytes(tweet(1), tweet(2)) }],
      [
        { bucketId: wireBucketId(TAO), contents: [tweet(1)] },
        { bucketId: wireBucketId(TAO), contents: [tweet(1), tweet(2)] },
      ],
    );
    expect(checked.deliveries[0].items.map((entry) => entry.item.uri)).toHaveLength(2);
    expect(checked.dropped).toBe(1);
  });

  it('costs a miner that delivers far less than its index claimed, not one that delivers more', () => {
    const contents = [tweet(1)];
    const short = checkContents(
      [{ bucket: TAO, claimedBytes: 10 * bytes(...contents) }],
      [{ bucketId: wireBucketId(TAO), contents }],
    );
    expect(short.score).toBeCloseTo(0.1);
    const more = checkContents(
      [{ bucket: TAO, claimedBytes: Math.floor(bytes(...contents) / 3) }],
      [{ bucketId: wireBucketId(TAO), contents }],
    );
    expect(more.score).toBe(1);
    const nothing = checkContents([{ bucket: TAO, claimedBytes: 5000 }], []);
    expect(nothing.deliveries[0]).toMatchObject({ returned: 0, items: [], score: 0 });
  });

  // Unknown fields pass the checks (the item is read without them): padded, a few real posts
  // met a claim a thousand times theirs (a hostile-miner audit's finding).
  it('counts a record padded far beyond its post at about its post’s size toward the claim', () => {
    const padded = [tweet(1, { zz: 'a'.repeat(200_000) }), tweet(2, { zz: 'a'.repeat(200_000) })];
    const answer = checkContents(
      [{ bucket: TAO, claimedBytes: bytes(...padded) }],
      [{ bucketId: wireBucketId(TAO), contents: padded }],
    );
    expect(answer.deliveries[0].items).toHaveLength(2);
    expect(answer.deliveries[0].items[0].contentBytes).toBe(Buffer.byteLength(padded[0]));
    expect(answer.deliveries[0].bytes).toBeLessThan(bytes(...padded) / 10);
    expect(answer.score).toBeLessThan(0.1);
  });
});

describe(deliveriesToKeep.name, () => {
  // Stored, a delivery whose every content was dropped was taken for the bucket's contents:
  // no items, "no data" while fresh, when the miner had only lied (a review's finding).
  it('keeps every delivery but one whose every content the checks dropped; an empty one stays', () => {
    const relabelled = { ...TAO, timeBucket: HOUR + 1 };
    const empty = { ...TAO, timeBucket: HOUR + 2 };
    const checked = checkContents(
      [relabelled, TAO, empty].map((bucket) => ({ bucket, claimedBytes: 100 })),
      [
        { bucketId: wireBucketId(TAO), contents: [tweet(1), tweet(2, { text: 7 })] },
        {
          bucketId: wireBucketId(relabelled),
          contents: [tweet(3, { tweet_hashtags: ['#elsewhere'] }), tweet(4)],
        },
        { bucketId: wireBucketId(empty), contents: [] },
      ],
    );
    expect(checked.deliveries.map((delivery) => delivery.returned)).toEqual([2, 2, 0]);
    expect(deliveriesToKeep(checked).map((delivery) => delivery.bucket)).toEqual([TAO, empty]);
  });
});

describe(`${checkContents.name} at its edges`, () => {
  /** The items kept of one answer for TAO, by uri. */
  const kept = (claimedBytes: number, contents: string[]) =>
    checkContents([{ bucket: TAO, claimedBytes }], [{ bucketId: wireBucketId(TAO), contents }])
      .deliveries[0];

  // Records are timed to the minute: one honest post in sixty sits on the hour's first instant.
  it("keeps a post dated at the hour's first instant, and drops one at the next hour's", () => {
    const first = tweet(1, { timestamp: bucketStart(HOUR).toISOString() });
    const next = tweet(2, { timestamp: bucketStart(HOUR + 1).toISOString() });
    const delivery = kept(bytes(first), [first, next]);
    expect(delivery.items.map((entry) => entry.item.uri)).toEqual(['https://x.com/alice/status/1']);
    expect(delivery.score).toBe(0.5);
  });

  it('keeps the last content the cap allows in an answer, and drops the one after', () => {
    const junk = Array.from({ length: MAX_CONTENTS_PER_ANSWER - 1 }, () => 'x');
    const delivery = kept(1, [...junk, tweet(7), tweet(8)]);
    expect(delivery.items.map((entry) => entry.item.uri)).toEqual(['https://x.com/alice/status/7']);
  });

  /** A record padded with ASCII to exactly `length` bytes. */
  function padded(length: number): string {
    const base = tweet(9);
    return tweet(9, { text: `post 9 #TAO ${'a'.repeat(length - base.length - 1)}` });
  }

  it('keeps a record of exactly the size cap, and drops one a byte larger', () => {
    expect(Buffer.byteLength(padded(MAX_CONTENT_BYTES))).toBe(MAX_CONTENT_BYTES);
    expect(kept(MAX_CONTENT_BYTES, [padded(MAX_CONTENT_BYTES)]).items).toHaveLength(1);
    expect(kept(MAX_CONTENT_BYTES, [padded(MAX_CONTENT_BYTES + 1)]).items).toHaveLength(0);
  });

  // The cap is on bytes: fewer characters than the cap can be twice as many bytes in UTF-8, and
  // GetDataEntityBucket answers have no other cap.
  it('drops a record under the cap in characters but over it in UTF-8 bytes', () => {
    const wide = tweet(10, { text: `#TAO ${'é'.repeat(200_000)}` });
    expect(wide.length).toBeLessThan(MAX_CONTENT_BYTES);
    expect(Buffer.byteLength(wide)).toBeGreaterThan(MAX_CONTENT_BYTES);
    expect(kept(Buffer.byteLength(wide), [wide]).items).toHaveLength(0);
  });
});

describe(checkEntities.name, () => {
  const unlabeled = { source: 2 as const, label: null, timeBucket: HOUR };
  const entity = (content: string, declared = Buffer.byteLength(content)) => ({
    uri: (JSON.parse(content) as { url: string }).url,
    datetime: minute(1),
    source: 2,
    label: null,
    content,
    content_size_bytes: declared,
  });

  it('checks a GetDataEntityBucket answer by the same rules, declared sizes included', () => {
    const plain = tweet(1, { tweet_hashtags: [] });
    const checked = checkEntities({ bucket: unlabeled, claimedBytes: bytes(plain) }, [
      entity(plain),
      entity(tweet(2, { tweet_hashtags: [] }), 1),
      entity(tweet(3)),
    ]);
    expect(checked.deliveries[0].items.map((entry) => entry.item.uri)).toEqual([
      'https://x.com/alice/status/1',
    ]);
    expect(checked.dropped).toBe(2);
  });
});

describe('bucket ids', () => {
  it('reads an echoed bucket id, refusing malformed ones', () => {
    expect(bucketOfWireId(wireBucketId(TAO))).toEqual(TAO);
    expect(bucketOfWireId({ time_bucket: { id: 1 }, source: 2, label: null })).toEqual({
      source: 2,
      label: null,
      timeBucket: 1,
    });
    for (const bad of [
      null,
      {},
      { time_bucket: { id: '1' }, source: 2 },
      { ...wireBucketId(TAO), source: 3 },
    ])
      expect(bucketOfWireId(bad)).toBeUndefined();
  });

  it("keeps the contents of a bucket whose label comes back padded (Postgres' CHAR(32))", () => {
    const contents = [tweet(1), tweet(2)];
    const padded = { ...wireBucketId(TAO), label: { value: '#tao'.padEnd(32) } };
    const checked = checkContents(
      [{ bucket: TAO, claimedBytes: bytes(...contents) }],
      [{ bucketId: padded, contents }],
    );
    expect(checked.deliveries[0].items).toHaveLength(2);
    expect(bucketOfWireId({ ...padded, label: { value: ' '.repeat(32) } })?.label).toBeNull();
  });
});

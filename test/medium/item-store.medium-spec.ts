import { randomBytes } from 'node:crypto';
import { DataSource } from 'typeorm';
import { generateCorpus } from '../../src/devnet/corpus';
import {
  BucketKey,
  bucketStart,
  DataItem,
  RedditItem,
  timeBucketId,
  XItem,
} from '../../src/network/protocol';
import { SourceId } from '../../src/network/sources';
import { BucketDelivery, StoredItemQuery } from '../../src/network/stored/item-store';
import { ItemStoreRepository } from '../../src/network/stored/item-store.repository';
import { keyPaths, liveItem } from '../support/items';
import { MediumDatabase, openMediumDatabase } from '../support/medium-database';

const HOUR_MS = 3_600_000;
const DAY_BUCKET = 20_400 * 24; // an hour that starts a day (2025-11-08T00:00Z)
const corpus = generateCorpus({ seed: 17, size: { x: 5, reddit: 5 } }).items;
const xTemplate = corpus.find((item): item is XItem => item.source === 'X')!;
const redditTemplate = corpus.find((item): item is RedditItem => item.source === 'REDDIT')!;

/** An X post at `minute` minutes after DAY_BUCKET's start. */
function xPost(id: string, minute: number, label: string | null, username = 'Alice'): XItem {
  const item = structuredClone(xTemplate);
  item.uri = `https://x.com/${username.replace(/^@/, '')}/status/${id}`;
  item.tweet.id = id;
  item.datetime = new Date(bucketStart(DAY_BUCKET).getTime() + minute * 60_000).toISOString();
  item.label = label;
  item.user.username = username;
  return item;
}

function redditPost(id: string, minute: number, label: string): RedditItem {
  const item = structuredClone(redditTemplate);
  item.uri = `https://www.reddit.com/${label}/comments/${id}/`;
  item.url = item.uri;
  item.id = `t3_${id}`;
  item.communityName = label;
  item.datetime = new Date(bucketStart(DAY_BUCKET).getTime() + minute * 60_000).toISOString();
  item.label = label;
  return item;
}

function delivery(
  hotkey: string,
  items: DataItem[],
  options: { at?: Date; bucket?: Partial<BucketKey> } = {},
): BucketDelivery {
  const first = items[0];
  const source: SourceId = first?.source === 'REDDIT' ? 1 : 2;
  return {
    bucket: {
      source,
      label: first?.label ?? null,
      timeBucket: first ? timeBucketId(new Date(first.datetime)) : DAY_BUCKET,
      ...options.bucket,
    },
    minerUid: Number(hotkey.replace(/\D/g, '') || 0),
    minerHotkey: hotkey,
    fetchedAt: options.at ?? new Date('2023-11-09T00:00:00Z'),
    claimedBytes: 1000,
    items: items.map((item) => ({
      item,
      timeBucket: timeBucketId(new Date(item.datetime)),
      contentBytes: 100 + item.uri.length,
    })),
  };
}

const FAR_END = new Date(bucketStart(DAY_BUCKET + 24 * 10));

describe(ItemStoreRepository.name, () => {
  let medium: MediumDatabase;
  let database: DataSource;
  let store: ItemStoreRepository;

  // A database of its own: the spec drops partitions and reads the whole store.
  beforeAll(async () => {
    medium = await openMediumDatabase({ own: 'itemstore' });
    database = medium.dataSource;
    store = new ItemStoreRepository(database);
  });
  afterAll(() => medium.close());
  afterEach(async () => {
    await database.query('TRUNCATE stored_items, stored_bucket_fetches');
  });

  const find = (query: Partial<StoredItemQuery>) =>
    store.find({ source: 2, from: null, to: FAR_END, usernames: [], limit: 1000, ...query });
  const uris = async (query: Partial<StoredItemQuery>) =>
    (await find(query)).map(({ item }) => item.uri);

  it('keeps one item per uri, with every miner whose copy agrees on its content', async () => {
    const post = xPost('1', 5, '#a');
    await store.save(delivery('hotkey-1', [post], { at: new Date('2023-11-09T00:00:00Z') }));
    // A later scrape: more likes, a new profile picture, the handle stored with `@`.
    const rescraped = structuredClone(post);
    rescraped.tweet.like_count = 1_000;
    rescraped.user.profile_image_url = 'https://pbs.twimg.com/new.jpg';
    rescraped.user.username = '@Alice';
    await store.save(delivery('hotkey-2', [rescraped], { at: new Date('2023-11-09T01:00:00Z') }));
    await store.save(delivery('hotkey-1', [post], { at: new Date('2023-11-09T00:30:00Z') }));

    const found = await find({});
    expect(found).toHaveLength(1);
    expect(found[0]).toEqual({
      item: post,
      contentBytes: 100 + post.uri.length,
      deliveredBy: ['hotkey-1', 'hotkey-2'],
      fetchedAt: new Date('2023-11-09T01:00:00Z'),
    });
  });

  it('reads items back with their keys in the order of live answers, nested ones too', async () => {
    const thread = redditPost('r1', 6, 'r/a');
    thread.createdAt = thread.datetime;
    const x = liveItem(xPost('1', 5, '#a'));
    const reddit = liveItem(thread);
    // The hosted API's order, which live answers have (sn13/records.ts).
    expect(Object.keys(x).slice(0, 7)).toEqual([
      'text',
      'datetime',
      'uri',
      'source',
      'label',
      'content_size_bytes',
      'tweet',
    ]);
    await store.save(delivery('hotkey-1', [x]));
    await store.save(delivery('hotkey-1', [reddit]));

    const [storedX] = await find({});
    const [storedReddit] = await find({ source: 1 });
    expect(storedX.item).toEqual(x);
    expect(keyPaths(storedX.item)).toEqual(keyPaths(x));
    expect(storedReddit.item).toEqual(reddit);
    expect(keyPaths(storedReddit.item)).toEqual(keyPaths(reddit));
  });

  it('does not count a copy whose content differs as corroboration, and keeps the first', async () => {
    const post = xPost('1', 5, '#a');
    await store.save(delivery('hotkey-1', [post], { at: new Date('2023-11-09T00:00:00Z') }));
    const other = { ...structuredClone(post), text: 'words the author never wrote #a' };
    await store.save(delivery('hotkey-2', [other], { at: new Date('2023-11-09T01:00:00Z') }));
    // The same words filed under another label: a row of its own (next test), no corroboration.
    const relabelled = { ...structuredClone(post), label: '#b' };
    await store.save(delivery('hotkey-3', [relabelled], { at: new Date('2023-11-09T02:00:00Z') }));
    const thread = redditPost('r1', 5, 'r/a');
    await store.save(delivery('hotkey-1', [thread]));
    await store.save(delivery('hotkey-2', [{ ...thread, title: 'another title' }]));
    await store.save(delivery('hotkey-3', [{ ...thread, score: 99, num_comments: 7 }]));
    // Each other field the copies must agree on, changed alone (a mutation audit found that
    // dropping the body from contentOf failed no test); the subreddit's case is no change.
    await store.save(delivery('hotkey-4', [{ ...thread, body: 'another body' }]));
    await store.save(delivery('hotkey-5', [{ ...thread, parentId: 't3_elsewhere' }]));
    await store.save(delivery('hotkey-6', [{ ...thread, username: 'someone_else' }]));
    await store.save(delivery('hotkey-7', [{ ...thread, communityName: 'r/A' }]));

    expect(await find({ labels: ['#a'] })).toEqual([
      expect.objectContaining({
        item: post,
        deliveredBy: ['hotkey-1'],
        fetchedAt: new Date('2023-11-09T00:00:00Z'),
      }),
    ]);
    expect(await find({ labels: ['#b'] })).toEqual([
      expect.objectContaining({ item: relabelled, deliveredBy: ['hotkey-3'] }),
    ]);
    expect(await find({ source: 1 })).toEqual([
      expect.objectContaining({
        item: thread,
        deliveredBy: ['hotkey-1', 'hotkey-3', 'hotkey-7'],
      }),
    ]);
  });

  it('keeps a post filed under another label first from hiding it from its own label', async () => {
    // A hostile miner moved another hashtag first in real posts and was fetched first; the
    // honest copies came after (a hostile-miner audit's finding: `#a` then answered nothing).
    const posts = ['1', '2'].map((id) => xPost(id, 5 + Number(id), '#a'));
    const hijacked = posts.map((post) => ({ ...structuredClone(post), label: '#hijack' }));
    await store.save(delivery('hotkey-9', hijacked, { at: new Date('2023-11-09T00:00:00Z') }));
    await store.save(delivery('hotkey-1', posts, { at: new Date('2023-11-09T01:00:00Z') }));
    await store.save(delivery('hotkey-2', posts, { at: new Date('2023-11-09T02:00:00Z') }));

    const found = async (label: string) =>
      (await find({ labels: [label] })).map(({ item, deliveredBy }) => ({ item, deliveredBy }));
    expect(await found('#a')).toEqual([
      { item: posts[1], deliveredBy: ['hotkey-1', 'hotkey-2'] },
      { item: posts[0], deliveredBy: ['hotkey-1', 'hotkey-2'] },
    ]);
    expect(await found('#hijack')).toEqual([
      { item: hijacked[1], deliveredBy: ['hotkey-9'] },
      { item: hijacked[0], deliveredBy: ['hotkey-9'] },
    ]);
    // Any label: each post once.
    expect(await uris({})).toEqual([posts[1].uri, posts[0].uri]);
  });

  // X items are dated to their id's second, so copies of a post under two labels tie: the
  // index's order answered a hijacker's rewritten copy for half the posts of a two-label query
  // (a hostile-miner audit's finding).
  it('answers the best corroborated copy of a post filed under several labels', async () => {
    const posts = ['1', '2', '3', '4'].map((id) => xPost(id, 5 + Number(id), '#a'));
    const rewritten = posts.map((post) => ({ ...post, label: '#b', text: `SCAM ${post.text}` }));
    // The hijacker's first, so that the table's own order would answer its copies.
    await store.save(delivery('hotkey-9', rewritten, { at: new Date('2023-11-09T00:00:00Z') }));
    await store.save(delivery('hotkey-1', posts, { at: new Date('2023-11-09T01:00:00Z') }));
    await store.save(delivery('hotkey-2', posts, { at: new Date('2023-11-09T02:00:00Z') }));
    const answered = async (query: Partial<StoredItemQuery>) =>
      (await find(query)).map(({ item }) => (item as XItem).text);
    const honest = [...posts].reverse().map((post) => post.text);

    for (const labels of [
      ['#a', '#b'],
      ['#b', '#a'],
    ])
      expect(await answered({ labels })).toEqual(honest);
    expect(await answered({})).toEqual(honest);
    expect(await answered({ usernames: ['alice'] })).toEqual(honest);
    // Page by page too: each page's one item is the honest copy.
    for (let at = 0; at < posts.length; at++) {
      const newer = [...posts].reverse()[at - 1];
      const before = newer && { datetime: new Date(newer.datetime), uri: newer.uri };
      expect(await answered({ labels: ['#b', '#a'], before, limit: 1 })).toEqual([honest[at]]);
    }
  });

  // Copies are counted by operator (coldkey), as live corroboration counts them: two hotkeys of
  // one operator filing a rewritten copy are one, against two honest operators.
  it("counts a copy's operators, not its miners' hotkeys", async () => {
    await database.query(
      `INSERT INTO miners (uid, hotkey, coldkey, incentive, validator_permit, credibility, state,
                           updated_at)
       SELECT uid, hotkey, coldkey, 0, false, 0.5, 'active', now()
       FROM unnest($1::int[], $2::varchar[], $3::varchar[]) AS m(uid, hotkey, coldkey)`,
      [
        [8, 9, 1],
        ['hotkey-8', 'hotkey-9', 'hotkey-1'],
        ['coldkey-hijack', 'coldkey-hijack', 'coldkey-1'],
      ],
    );
    try {
      const posts = ['1', '2'].map((id) => xPost(id, 5 + Number(id), '#a'));
      const rewritten = posts.map((post) => ({ ...post, label: '#b', text: `SCAM ${post.text}` }));
      await store.save(delivery('hotkey-9', rewritten, { at: new Date('2023-11-09T00:00:00Z') }));
      await store.save(delivery('hotkey-8', rewritten, { at: new Date('2023-11-09T00:10:00Z') }));
      await store.save(delivery('hotkey-1', posts, { at: new Date('2023-11-09T01:00:00Z') }));
      // A hotkey no longer in the metagraph is an operator of its own.
      await store.save(delivery('hotkey-2', posts, { at: new Date('2023-11-09T02:00:00Z') }));
      const honest = [...posts].reverse().map((post) => post.text);
      for (const query of [{ labels: ['#b', '#a'] }, {}])
        expect((await find(query)).map(({ item }) => (item as XItem).text)).toEqual(honest);
    } finally {
      await database.query('DELETE FROM miners');
    }
  });

  // A post's copies at one time take one row of a merged page (DISTINCT ON); in a branch of any
  // label they take a row each, as do its copies at other times, and a read stops at eight rows
  // per item asked for, saying it was cut (hostile-miner audit, review).
  it('pages past copies at one time, and cuts a read at eight rows per item, saying so', async () => {
    const posts = Array.from({ length: 20 }, (_, n) => xPost(String(n + 1), 5 + n, '#a'));
    await store.save(delivery('hotkey-1', posts));
    const copies = Array.from({ length: 20 }, (_, copy) => `#copy${copy}`);
    for (const label of copies)
      await store.save(
        delivery(
          'hotkey-9',
          posts.map((post) => ({ ...post, label })),
          { bucket: { label } },
        ),
      );
    const query = jest.spyOn(database, 'query');
    try {
      expect(await find({ labels: ['#a', ...copies], limit: 20 })).toHaveLength(20);
      expect(query).toHaveBeenCalledTimes(1);
    } finally {
      query.mockRestore();
    }
    // Any label: 20 + 19 + … rows for a post a page, unbounded; cut, and said so.
    const anyLabel = await store.findPage({
      source: 2,
      from: null,
      to: FAR_END,
      usernames: [],
      limit: 20,
    });
    expect(anyLabel.cut).toBe(true);
    expect(anyLabel.items.length).toBeLessThan(20);

    // One post at 20 times in an hour (20 labels), above an older one.
    const repeated = xPost('900', 59, '#z');
    const older = xPost('901', 1, '#old');
    await store.save(delivery('hotkey-1', [older]));
    for (let second = 0; second < 20; second++) {
      const at = new Date(new Date(repeated.datetime).getTime() - second * 1000).toISOString();
      await store.save(
        delivery('hotkey-9', [{ ...repeated, datetime: at, label: `#t${second}` }], {
          bucket: { label: `#t${second}` },
        }),
      );
    }
    const usernames = ['alice'];
    const from = new Date(xPost('0', 0, null).datetime);
    const to = new Date(xPost('0', 59, null).datetime);
    const page = (limit: number) =>
      store.findPage({
        source: 2,
        from,
        to,
        usernames,
        limit,
        labels: ['#old', ...Array.from({ length: 20 }, (_, n) => `#t${n}`)],
      });
    const cut = await page(2);
    expect(cut.items.map(({ item }) => item.uri)).toEqual([repeated.uri]);
    expect(cut.cut).toBe(true);
    const whole = await page(3);
    expect(whole.items.map(({ item }) => item.uri)).toEqual([repeated.uri, older.uri]);
    expect(whole.cut).toBe(false);
  });

  it('pages a uri filed under two labels in one hour, at two times, exactly once', async () => {
    const newer = xPost('1', 30, '#a');
    const older = { ...xPost('1', 10, '#b') };
    const between = xPost('2', 20, '#a');
    await store.save(delivery('hotkey-1', [newer, between]));
    await store.save(delivery('hotkey-2', [older]));

    expect(await uris({ limit: 1 })).toEqual([newer.uri]);
    // Pages of one: the cursor past the newer row hides the older one under its other label.
    const seen: string[] = [];
    let before: StoredItemQuery['before'];
    for (;;) {
      const page = await find({ before, limit: 1 });
      seen.push(...page.map(({ item }) => item.uri));
      if (page.length < 1) break;
      before = { datetime: new Date(page[0].item.datetime), uri: page[0].item.uri };
    }
    expect(seen).toEqual([newer.uri, between.uri]);
    expect(await uris({ labels: ['#b'] })).toEqual([older.uri]);
  });

  it('never stores an item whose uri does not name it, whichever caller saves it', async () => {
    const script = { ...xPost('1', 5, '#a'), uri: 'javascript:alert(1)//x.com/a/status/1' };
    const otherPost = { ...xPost('2', 6, '#a'), uri: 'https://x.com/Alice/status/3' };
    const elsewhere = 'https://www.reddit.com/r/a/comments/r8/';
    const reddit = { ...redditPost('r9', 7, 'r/a'), uri: elsewhere, url: elsewhere };
    const evilHost = { ...xPost('6', 9, '#a'), uri: 'https://evil.example/Alice/status/6' };
    await store.save(delivery('hotkey-1', [script, otherPost, evilHost, xPost('4', 8, '#a')]));
    await store.save(delivery('hotkey-1', [reddit]));

    expect(await uris({})).toEqual(['https://x.com/Alice/status/4']);
    expect(await uris({ source: 1 })).toEqual([]);
    const [fetch] = await store.fetches(2, ['#a'], DAY_BUCKET, DAY_BUCKET);
    expect(fetch.itemCount).toBe(1);
  });

  // A uri is a key of the store's btree indexes, whose entries Postgres caps at 2,704 bytes, and
  // so is a Reddit author's name: one longer failed the statement, and the delivery with it.
  it("stores a delivery's items beside Reddit items whose uri or author no index could hold", async () => {
    const slug = randomBytes(2_000).toString('hex'); // random: Postgres cannot compress it
    const long = `https://www.reddit.com/r/a/comments/r7/${slug}/`;
    const longUri = { ...redditPost('r7', 7, 'r/a'), uri: long, url: long };
    const longAuthor = { ...redditPost('r8', 8, 'r/a'), username: slug };
    await store.save(delivery('hotkey-1', [redditPost('r9', 9, 'r/a'), longUri, longAuthor]));

    expect(await uris({ source: 1 })).toEqual(['https://www.reddit.com/r/a/comments/r9/']);
  });

  it('stores one post under its canonical uri however miners spell it', async () => {
    const post = xPost('5', 5, '#a', 'alice');
    await store.save(delivery('hotkey-1', [{ ...post, uri: 'https://x.com/ALICE/status/5' }]));
    await store.save(
      delivery('hotkey-2', [{ ...post, uri: 'https://twitter.com/alice/status/5?s=20' }]),
    );
    await store.save(delivery('hotkey-3', [post]));

    const found = await find({});
    expect(found.map(({ item }) => item.uri)).toEqual(['https://x.com/alice/status/5']);
    expect(found[0].deliveredBy).toEqual(['hotkey-1', 'hotkey-2', 'hotkey-3']);
  });

  it('merges a uri delivered twice in one delivery', async () => {
    await store.save(delivery('hotkey-1', [xPost('1', 5, '#a'), xPost('1', 5, '#a')]));
    expect(await uris({})).toHaveLength(1);
  });

  it('finds by label, by the null label and by any label of the source', async () => {
    await store.save(delivery('hotkey-1', [xPost('1', 1, '#a'), xPost('2', 2, '#a')]));
    await store.save(delivery('hotkey-1', [xPost('3', 3, '#b')]));
    await store.save(delivery('hotkey-1', [xPost('4', 4, null)]));
    await store.save(delivery('hotkey-1', [redditPost('r1', 5, 'r/c')]));
    const id = (uri: string) => uri.split('/').pop();

    expect((await uris({ labels: ['#a'] })).map(id)).toEqual(['2', '1']);
    expect((await uris({ labels: [null] })).map(id)).toEqual(['4']);
    expect((await uris({ labels: ['#b', null] })).map(id)).toEqual(['4', '3']);
    expect((await uris({})).map(id)).toEqual(['4', '3', '2', '1']);
    expect(await uris({ labels: [] })).toEqual([]);
    expect(await uris({ source: 1, labels: ['r/c'] })).toEqual([redditPost('r1', 5, 'r/c').uri]);
    expect(await uris({ source: 1, labels: ['#a'] })).toEqual([]);
  });

  it('files a label over 140 code points under its first 140, astral characters whole', async () => {
    const astral = '\u{1D41B}';
    const cut = `#${astral.repeat(139)}`;
    const post = xPost('1', 1, `#${astral.repeat(150)}`);
    await store.save(delivery('hotkey-1', [post], { bucket: { label: cut } }));
    expect(await uris({ labels: [cut] })).toEqual([post.uri]);
  });

  it('bounds the time range inclusively at both ends', async () => {
    const posts = [1, 2, 3, 4].map((minute) => xPost(String(minute), minute, '#a'));
    await store.save(delivery('hotkey-1', posts));
    const at = (minute: number) => new Date(posts[0].datetime).getTime() + (minute - 1) * 60_000;

    const between = await uris({ from: new Date(at(2)), to: new Date(at(3)) });
    expect(between).toEqual([posts[2].uri, posts[1].uri]);
    const inside = await uris({ from: new Date(at(2) + 1), to: new Date(at(3) - 1) });
    expect(inside).toEqual([]);
    expect(await uris({ to: new Date(at(2)) })).toEqual([posts[1].uri, posts[0].uri]);
  });

  it('filters by author, lower-cased and without @, alone or with labels', async () => {
    await store.save(
      delivery('hotkey-1', [xPost('1', 1, '#a', '@Alice'), xPost('2', 2, '#a', 'Bob')]),
    );
    await store.save(delivery('hotkey-1', [xPost('3', 3, '#b', 'ALICE')]));
    await store.save(delivery('hotkey-1', [xPost('4', 4, '#c', 'carol')]));
    await store.save(delivery('hotkey-1', [xPost('5', 5, null, 'carol')]));
    const id = (uri: string) => uri.split('/').pop();

    expect((await uris({ usernames: ['alice'] })).map(id)).toEqual(['3', '1']);
    expect((await uris({ usernames: ['alice', 'carol'] })).map(id)).toEqual(['5', '4', '3', '1']);
    expect((await uris({ usernames: ['alice'], labels: ['#a'] })).map(id)).toEqual(['1']);
    expect((await uris({ usernames: ['carol'], labels: [null] })).map(id)).toEqual(['5']);
    expect(await uris({ usernames: ['dave'] })).toEqual([]);
  });

  it('pages with `before` through every item exactly once, newest first', async () => {
    // Many items share a minute (records are rounded to it), over three days and three labels.
    const posts: XItem[] = [];
    for (let index = 0; index < 240; index++)
      posts.push(xPost(`${1000 + index}`, (index % 40) * 90, ['#a', '#b', null][index % 3]));
    for (const label of ['#a', '#b', null])
      await store.save(
        delivery(
          'hotkey-1',
          posts.filter((post) => post.label === label),
        ),
      );

    for (const labels of [undefined, ['#a', null]]) {
      const seen: string[] = [];
      let before: StoredItemQuery['before'];
      for (;;) {
        const page = await find({ labels, before, limit: 7 });
        if (page.length === 0) break;
        seen.push(...page.map(({ item }) => item.uri));
        const last = page[page.length - 1].item;
        before = { datetime: new Date(last.datetime), uri: last.uri };
      }
      const expected = posts
        .filter((post) => !labels || labels.includes(post.label))
        .sort((a, b) => b.datetime.localeCompare(a.datetime) || (a.uri < b.uri ? 1 : -1))
        .map((post) => post.uri);
      expect(seen).toEqual(expected);
    }
  });

  it('answers a handle stored with `@` (before items were normalized) without it', async () => {
    await store.save(delivery('hotkey-1', [xPost('1', 1, '#a', '@Alice')]));

    const [stored] = await find({});

    expect((stored.item as XItem).user.username).toBe('Alice');
  });

  it('returns a uri stored under two hours once: its newest row the query matches', async () => {
    const honest = xPost('1', 5, '#a');
    const later = { ...xPost('1', 125, '#b') };
    await store.save(delivery('hotkey-1', [honest]));
    await store.save(delivery('hotkey-2', [later]));

    expect(await find({})).toEqual([expect.objectContaining({ item: later })]);
    expect(await find({ labels: ['#a'] })).toEqual([expect.objectContaining({ item: honest })]);
    // A page that starts below the newer row does not bring the uri back.
    const before = { datetime: new Date(xPost('0', 60, null).datetime), uri: '' };
    expect(await find({ before })).toEqual([]);
  });

  it('fills a page past hidden rows and pages through duplicates exactly once', async () => {
    // Five uris under hours 0 and 2 (tweet ids are digits: a uri must name its post) (their hour-0
    // rows hidden), five only under hour 1.
    const ids = [1, 2, 3, 4, 5].map(String);
    await store.save(
      delivery(
        'hotkey-1',
        ids.map((id) => xPost(id, 10 + Number(id), '#a')),
      ),
    );
    await store.save(
      delivery(
        'hotkey-2',
        ids.map((id) => xPost(id, 130 + Number(id), '#b')),
      ),
    );
    await store.save(
      delivery(
        'hotkey-1',
        ids.map((id) => xPost(`9${id}`, 70 + Number(id), '#c')),
      ),
    );

    const seen: string[] = [];
    let before: StoredItemQuery['before'];
    for (;;) {
      const page = await find({ before, limit: 3 });
      seen.push(...page.map(({ item }) => item.uri.split('/').pop()!));
      if (page.length < 3) break;
      const last = page[page.length - 1].item;
      before = { datetime: new Date(last.datetime), uri: last.uri };
    }
    expect(seen).toEqual(['5', '4', '3', '2', '1', '95', '94', '93', '92', '91']);
    // A page whose rows are all hidden is read past, not returned empty.
    const afterAll = { datetime: new Date(xPost('x', 60, null).datetime), uri: '' };
    expect(await find({ before: afterAll, limit: 2 })).toEqual([]);
    expect(await uris({ labels: ['#a', '#c'], limit: 4 })).toHaveLength(4);
  });

  it('does not return a uri again on the page after its newer row', async () => {
    const honest = xPost('1', 5, '#a');
    const later = xPost('1', 125, '#a');
    await store.save(delivery('hotkey-1', [honest]));
    await store.save(delivery('hotkey-2', [later]));

    expect(await uris({ limit: 1 })).toEqual([later.uri]);
    // The cursor is the newer row itself: the older one is hidden by it.
    const before = { datetime: new Date(later.datetime), uri: later.uri };
    expect(await find({ before, limit: 1 })).toEqual([]);
  });

  it('hides an older row only behind a newer one the query matches too', async () => {
    // The uri's row at minute 5 matches each query below; its row at minute 125 does not.
    const older = { ...redditPost('r1', 5, 'r/a'), username: 'alice' };
    const newer = { ...redditPost('r1', 125, 'r/a'), label: 'r/b', username: 'bob' };
    await store.save(delivery('hotkey-1', [older]));
    await store.save(delivery('hotkey-2', [newer]));
    // A later page: the cursor lies between the two rows, so the newer one is above it.
    const before = { datetime: new Date(xPost('0', 60, null).datetime), uri: '' };
    const found = (query: Partial<StoredItemQuery>) => uris({ source: 1, before, ...query });

    expect(await found({ to: new Date(xPost('0', 90, null).datetime) })).toEqual([older.uri]);
    expect(await found({ labels: ['r/a'] })).toEqual([older.uri]);
    expect(await found({ usernames: ['alice'] })).toEqual([older.uri]);
    expect(await found({})).toEqual([]);
  });

  it("finds the items of a day's last hour, up to `to` or `before` in it", async () => {
    const early = xPost('1', 23 * 60 + 10, '#a');
    const late = xPost('2', 23 * 60 + 30, '#a');
    await store.save(delivery('hotkey-1', [early, late]));

    const to = new Date(xPost('0', 23 * 60 + 45, null).datetime);
    expect(await uris({ to })).toEqual([late.uri, early.uri]);
    const before = { datetime: new Date(late.datetime), uri: late.uri };
    expect(await uris({ before })).toEqual([early.uri]);
  });

  it('keeps the newest fetch of each bucket per miner', async () => {
    const bucket = { source: 2 as const, label: '#a', timeBucket: DAY_BUCKET };
    const at = (hour: number) => new Date(bucketStart(DAY_BUCKET + hour));
    await store.save(delivery('hotkey-1', [xPost('1', 1, '#a')], { bucket, at: at(2) }));
    await store.save(delivery('hotkey-1', [], { bucket, at: at(3) }));
    // A late answer to an older call.
    await store.save(delivery('hotkey-1', [xPost('2', 2, '#a')], { bucket, at: at(1) }));
    await store.save(delivery('hotkey-2', [xPost('1', 1, '#a')], { bucket, at: at(1) }));
    const unlabeled = { ...bucket, label: null };
    await store.save(delivery('hotkey-3', [xPost('4', 4, null)], { bucket: unlabeled }));
    await store.save(delivery('hotkey-3', [], { bucket: { ...bucket, timeBucket: 5 } }));

    const fetches = await store.fetches(2, ['#a'], DAY_BUCKET, DAY_BUCKET);
    expect(fetches).toEqual([
      {
        bucket,
        minerUid: 1,
        minerHotkey: 'hotkey-1',
        fetchedAt: at(3),
        claimedBytes: 1000,
        itemCount: 0,
        bytes: 0,
      },
      expect.objectContaining({ minerHotkey: 'hotkey-2', fetchedAt: at(1), itemCount: 1 }),
    ]);
    const withNull = await store.fetches(2, ['#a', null], DAY_BUCKET, DAY_BUCKET + 1);
    expect(withNull.map((fetch) => fetch.minerHotkey).sort()).toEqual([
      'hotkey-1',
      'hotkey-2',
      'hotkey-3',
    ]);
    expect(await store.fetches(1, ['#a', null], DAY_BUCKET, DAY_BUCKET)).toEqual([]);
    expect(await store.fetches(2, [], DAY_BUCKET, DAY_BUCKET)).toEqual([]);
  });

  it("keeps a call's deliveries together: every bucket's items and fetch, one miner only", async () => {
    const hour = (post: DataItem) => timeBucketId(new Date(post.datetime));
    const a = [xPost('1', 1, '#a'), xPost('2', 2, '#a')];
    const b = [xPost('3', 61, '#b')];
    const reddit = [redditPost('r1', 5, 'r/c')];
    await store.save(
      delivery('hotkey-1', a),
      delivery('hotkey-1', b),
      delivery('hotkey-1', reddit),
      delivery('hotkey-1', [], { bucket: { label: '#empty' } }),
    );
    expect(await uris({ labels: ['#a', '#b'] })).toEqual([b[0].uri, a[1].uri, a[0].uri]);
    expect(await uris({ source: 1 })).toEqual([reddit[0].uri]);
    const fetches = await store.fetches(2, ['#a', '#b', '#empty'], 0, DAY_BUCKET + 48);
    expect(
      fetches.map((fetch) => [fetch.bucket.label, fetch.bucket.timeBucket, fetch.itemCount]).sort(),
    ).toEqual([
      ['#a', hour(a[0]), 2],
      ['#b', hour(b[0]), 1],
      ['#empty', DAY_BUCKET, 0],
    ]);
    await expect(store.save(delivery('hotkey-1', a), delivery('hotkey-2', b))).rejects.toThrow(
      /one miner/,
    );
  });

  it('creates daily partitions on demand and drops whole days past the horizon', async () => {
    const partitions = async () =>
      (
        await database.query<{ name: string }[]>(
          `SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
           WHERE i.inhparent = 'stored_items'::regclass ORDER BY 1`,
        )
      ).map((row) => row.name);
    await store.deleteBefore(FAR_END);
    expect(await partitions()).toEqual([]);
    const dayD = xPost('71', 23 * 60 + 59, '#a');
    const dayD1 = xPost('72', 24 * 60, '#a');
    await store.save(delivery('hotkey-1', [dayD]));
    await store.save(delivery('hotkey-1', [dayD1]));
    expect(await partitions()).toEqual(['stored_items_20251108', 'stored_items_20251109']);

    // Another replica forgets day D while this one still knows its partition.
    const replica = new ItemStoreRepository(database);
    expect(
      await replica.deleteBefore(new Date(new Date(dayD1.datetime).getTime() + 5 * HOUR_MS)),
    ).toBe(1);
    expect(await partitions()).toEqual(['stored_items_20251109']);
    expect(await uris({})).toEqual([dayD1.uri]);
    expect(await store.fetches(2, ['#a'], 0, DAY_BUCKET + 48)).toEqual([
      expect.objectContaining({ bucket: expect.objectContaining({ timeBucket: DAY_BUCKET + 24 }) }),
    ]);

    await store.save(delivery('hotkey-1', [dayD]));
    expect(await uris({})).toEqual([dayD1.uri, dayD.uri]);
  });
});

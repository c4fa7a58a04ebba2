import { Clock } from '../../common/clock/clock';
import { CredibilityRecorder, MinerScore } from '../credibility-recorder';
import { BucketHolding } from '../index/miner-index-read.repository';
import { MinerIndexService } from '../index/miner-index.service';
import { BucketKey, bucketStart, MAX_BUCKET_BYTES, NetworkQuery, timeBucketId } from '../protocol';
import { wireBucketId, WireBucketId } from '../sn13/messages';
import { SynapseName } from '../../common/synapse-names';
import { CallBudgets } from '../transport/call-budgets';
import { MinerClient } from '../transport/miner-client';
import { MinerReply, MinerTarget, replyOf } from '../transport/miner-reply';
import { MinerCallError } from '../transport/miner-failures';
import { bucketKeyOf, DEFAULT_RECORD_BYTES } from './bucket-selection';
import { ContentsFetcher } from './contents-fetcher';
import { LiedBuckets } from './lied-buckets';
import { MetagraphService } from '../metagraph/metagraph.service';
import { StoredDataService } from './stored-data.service';
import { MemoryItemStore } from '../../../test/support/memory-item-store';
import { until } from '../../../test/support/until';
import { testConfig } from '../../../test/support/test-config';

/**
 * The query deadline of every test but the one about the deadline: generous, so that a loaded
 * machine's stall never cuts an answer the test expects whole (300 ms could).
 */
const QUERY_DEADLINE_MS = 10_000;
/** The deadline of the test about the deadline, passed to that answer alone. */
const DEADLINE_MS = 300;
const NOW_HOUR = timeBucketId(new Date());
/** Past hours only: their freshness does not depend on when the test runs. */
const HOURS = [NOW_HOUR - 1, NOW_HOUR - 2, NOW_HOUR - 3];

/**
 * An `XContent` record in the hour, filed under `tag` (its first hashtag), padded to about the
 * size the planner assumes of a record (DEFAULT_RECORD_BYTES).
 */
function tweet(id: number, hour: number, tag: string, username = 'alice'): string {
  return JSON.stringify({
    username,
    text: `post ${id} ${tag} ${'.'.repeat(DEFAULT_RECORD_BYTES - 250)}`,
    url: `https://x.com/${username}/status/${id}`,
    timestamp: new Date(bucketStart(hour).getTime() + (id % 60) * 60_000).toISOString(),
    tweet_hashtags: [tag],
    tweet_id: String(id),
  });
}

type Tweet = { tweet_id: string };

interface FakeMiner {
  uid: number;
  coldkey: string;
  credibility: number;
  /** Contents by bucket key. */
  holds: Map<string, string[]>;
  /** What the miner sends instead of what it holds, for the buckets asked. */
  answer?: (asked: WireBucketId[]) => [WireBucketId, unknown[]][];
  delayMs?: number;
  fails?: MinerCallError;
  /** What its index claims for each bucket, instead of the size of what it holds. */
  claims?: number;
}

const bytes = (contents: readonly string[]) =>
  contents.reduce((sum, content) => sum + Buffer.byteLength(content), 0);

function bucket(label: string, timeBucket: number): BucketKey {
  return { source: 2, label, timeBucket };
}

/** Miner `uid` holds 10 posts in each hour of HOURS under `tag`: the same posts as its peers. */
function miner(uid: number, tag = '#tao'): FakeMiner {
  const holds = new Map<string, string[]>();
  const firstId = tag === '#tao' ? 1 : 5001;
  HOURS.forEach((hour, index) =>
    holds.set(
      bucketKeyOf(bucket(tag, hour)),
      Array.from({ length: 10 }, (_, n) => tweet(firstId + index * 100 + n, hour, tag)),
    ),
  );
  const coldkey = `ck${uid}`;
  return { uid, coldkey, credibility: 0.9, holds };
}

function setUp(
  miners: FakeMiner[],
  options: {
    callsLeft?: number;
    /** When each holder's oldest counted call leaves its window (null: none counted). */
    nextAt?: (hotkey: string) => Date | null;
    indexLoaded?: boolean;
    /** Uids the client may not ask (they refused the synapse), or whose circuit is open. */
    refused?: number[];
    circuitOpen?: number[];
    minersPerQuery?: number;
    /** How long the index takes to say who holds what (the planning before any call). */
    holdingsDelayMs?: number;
    /** Why the stored metagraph is not in use: no miner may be called (minerCalls). */
    storedNotInUse?: string;
  } = {},
) {
  const calls: { uid: number; synapse: SynapseName; buckets: number }[] = [];
  /** The purpose each budget read was made for. */
  const budgetReads: (string | undefined)[] = [];
  const scores: MinerScore[] = [];
  const store = new MemoryItemStore();
  const byUid = new Map(miners.map((entry) => [entry.uid, entry]));
  const client = {
    mayAsk: (hotkey: string) => !(options.refused ?? []).some((uid) => hotkey === `hk${uid}`),
    isCircuitOpen: ({ uid }: { uid: number }) => (options.circuitOpen ?? []).includes(uid),
    async call(
      target: MinerTarget,
      synapse: SynapseName,
      fields: Record<string, unknown>,
    ): Promise<MinerReply> {
      const fake = byUid.get(target.uid)!;
      const asked = fields.data_entity_bucket_ids as WireBucketId[];
      calls.push({ uid: target.uid, synapse, buckets: asked.length });
      if (fake.delayMs) await new Promise((resolve) => setTimeout(resolve, fake.delayMs));
      if (fake.fails) throw fake.fails;
      const pairs =
        fake.answer?.(asked) ??
        asked.map((id): [WireBucketId, string[]] => [
          id,
          fake.holds.get(
            bucketKeyOf({ source: 2, label: id.label!.value, timeBucket: id.time_bucket.id }),
          ) ?? [],
        ]);
      return replyOf({ bucket_ids_to_contents: pairs }, 1);
    },
  } as unknown as MinerClient;
  const index = {
    holdings: async (
      _source: number,
      labels: readonly (string | null)[],
      from: number,
      to: number,
    ) => {
      if (options.holdingsDelayMs)
        await new Promise((resolve) => setTimeout(resolve, options.holdingsDelayMs));
      const rows: BucketHolding[] = [];
      for (const fake of miners)
        for (const [key, contents] of fake.holds) {
          const [, label, timeBucket] = JSON.parse(key) as [number, string, number];
          if (!labels.includes(label) || timeBucket < from || timeBucket > to) continue;
          rows.push({
            timeBucket,
            label,
            uid: fake.uid,
            hotkey: `hk${fake.uid}`,
            coldkey: fake.coldkey,
            axonUrl: `http://127.0.0.1:${9000 + fake.uid}`,
            credibility: fake.credibility,
            bytes: fake.claims ?? bytes(contents),
          });
        }
      rows.sort((a, b) => b.timeBucket - a.timeBucket || b.credibility - a.credibility);
      return rows;
    },
    anyIndexLoaded: () => Promise.resolve(options.indexLoaded ?? miners.length > 0),
  } as unknown as MinerIndexService;
  const budgets = {
    left: (hotkeys: string[], _synapse: SynapseName, purpose?: string) => {
      budgetReads.push(purpose);
      return Promise.resolve(
        new Map(
          hotkeys.map((hotkey) => [
            hotkey,
            { left: options.callsLeft ?? 8, nextAt: options.nextAt?.(hotkey) ?? null },
          ]),
        ),
      );
    },
  } as unknown as CallBudgets;
  const credibility = {
    record: (observed: MinerScore[]) => scores.push(...observed),
  } as unknown as CredibilityRecorder;
  const config = testConfig({
    network: {
      queryDeadlineMs: QUERY_DEADLINE_MS,
      minersPerQuery: options.minersPerQuery ?? 5,
      minerMaxResponseBytes: 16 * 1024 * 1024,
      storedCurrentHourTtlMs: 300_000,
      bucketFetchTimeoutMs: 5000,
    },
  });
  const clock = new Clock();
  const lies = new LiedBuckets(clock);
  const fetcher = new ContentsFetcher(client, store, lies, credibility, clock, config);
  const service = new StoredDataService(
    index,
    store,
    fetcher,
    client,
    budgets,
    lies,
    clock,
    config,
    {
      coldkeysByHotkey: () => new Map(miners.map((fake) => [`hk${fake.uid}`, fake.coldkey])),
      minerCalls: () =>
        options.storedNotInUse
          ? { allowed: false, why: options.storedNotInUse, detail: 'file /tmp/devnet.json' }
          : { allowed: true },
    } as unknown as MetagraphService,
  );
  return { service, store, calls, scores, budgetReads, clock };
}

function query(overrides: Partial<NetworkQuery> = {}): NetworkQuery {
  return {
    source: 'x',
    usernames: [],
    keywords: ['#tao'],
    keywordMode: 'all',
    startDate: null,
    endDate: new Date(),
    limit: 15,
    ...overrides,
  };
}

describe(StoredDataService.name, () => {
  it('fetches the newest buckets the limit needs, one call per holder, and answers from the store', async () => {
    const { service, calls, store, scores } = setUp([miner(1), miner(2)]);
    const answer = await service.answer(query());
    // 15 items at about 10 a bucket: the two newest hours, from both holders (corroboration).
    expect(calls).toEqual([
      { uid: 1, synapse: 'GetContentsByBuckets', buckets: 2 },
      { uid: 2, synapse: 'GetContentsByBuckets', buckets: 2 },
    ]);
    expect(store.fetchRows.size).toBe(4);
    expect(answer.items).toHaveLength(15);
    const times = answer.items.map((item) => Date.parse(item.datetime));
    expect([...times].sort((a, b) => b - a)).toEqual(times);
    expect(answer).toMatchObject({
      coverage: 'complete',
      buckets: { planned: 2, fromStore: 0, fetchedNow: 2, missing: 0 },
      miners: { queried: 2, responded: 2, empty: 0, passedChecks: 2, failed: { count: 0 } },
      itemsDroppedInvalid: 0,
      consensus: 1,
      deadlineReached: false,
    });
    expect(answer.oldestFetchedAt).toBeInstanceOf(Date);
    expect(scores).toEqual([
      { uid: 1, hotkey: 'hk1', score: 1 },
      { uid: 2, hotkey: 'hk2', score: 1 },
    ]);
  });

  // One post is one uri in the store only as the record spells it: X handles are case-insensitive
  // (a Reddit uri may or may not carry the title's slug), so two honest-looking copies can be two
  // rows. The answer promises one item per post (an audit's finding).
  it('answers a post stored under two spellings of its uri once', async () => {
    const shouting = miner(2);
    for (const [key, contents] of shouting.holds) {
      const [, , hour] = JSON.parse(key) as [number, string, number];
      const ids = contents.map((content) => Number((JSON.parse(content) as Tweet).tweet_id));
      shouting.holds.set(
        key,
        ids.map((id) => tweet(id, hour, '#tao', 'ALICE')),
      );
    }
    const { service, store } = setUp([miner(1), shouting]);
    const answer = await service.answer(query({ limit: 30 }));
    expect(new Set([...store.items.keys()].map((uri) => uri.split('/')[3]))).toEqual(
      new Set(['alice', 'ALICE']),
    );
    const ids = answer.items.map((item) => (item.source === 'X' ? item.tweet.id : item.id));
    expect(ids.length).toBeGreaterThan(0);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('plans as many buckets when a holder claims the subnet’s cap for every hour', async () => {
    const liar = { ...miner(3), claims: MAX_BUCKET_BYTES };
    const { service, calls } = setUp([miner(1), miner(2), liar]);
    const answer = await service.answer(query());
    expect(answer.items).toHaveLength(15);
    expect(answer.buckets).toMatchObject({ planned: 2, fetchedNow: 2, missing: 0 });
    expect(calls.map((call) => call.uid).sort()).toEqual([1, 2]);
  });

  // A consumer's audit: the newest two hours were planned for 15 items (10 claimed in each) but
  // delivered 2 each; the read went on to an older hour already stored and answered its items as
  // the next newest, `complete`, though the hour between (held, never planned) holds 10 newer ones.
  it('says partial when the planned hours fall short and the hours older than them were not all planned', async () => {
    const hours = [NOW_HOUR - 1, NOW_HOUR - 2, NOW_HOUR - 3, NOW_HOUR - 4];
    const holder = miner(1);
    hours.forEach((hour, index) =>
      holder.holds.set(
        bucketKeyOf(bucket('#tao', hour)),
        Array.from({ length: 10 }, (_, n) => tweet(1 + index * 100 + n, hour, '#tao')),
      ),
    );
    const { service } = setUp([holder]);
    const oldest = bucketStart(hours[3]);
    await service.answer(
      query({ startDate: oldest, endDate: new Date(oldest.getTime() + 3_599_999) }),
    );
    holder.answer = (asked) =>
      asked.map((id): [WireBucketId, string[]] => [
        id,
        (holder.holds.get(bucketKeyOf(bucket('#tao', id.time_bucket.id))) ?? []).slice(0, 2),
      ]);

    const answer = await service.answer(query());

    expect(answer.buckets).toMatchObject({ planned: 2, fetchedNow: 2, missing: 0 });
    const unplanned = bucketStart(hours[2]).getTime();
    expect(answer.items.some((item) => Date.parse(item.datetime) < unplanned)).toBe(true);
    expect(answer.coverage).toBe('partial');
  });

  // The devnet's audit: an hour's holders held different posts; the answer read two of them,
  // found none of a username's, and said "no data", `complete`, though a third holder the index
  // listed held the post. Asking every holder is not affordable: the answer says `partial`.
  it('says partial when a holder of a planned hour was not read, though nothing matched', async () => {
    const third = { ...miner(3), credibility: 0.5 };
    const hour = bucketKeyOf(bucket('#tao', HOURS[0]));
    third.holds.set(hour, [...third.holds.get(hour)!, tweet(77, HOURS[0], '#tao', 'bob')]);
    const { service, calls } = setUp([miner(1), miner(2), third]);
    const answer = await service.answer(query({ usernames: ['bob'] }));
    expect(calls.map((call) => call.uid).sort()).toEqual([1, 2]);
    expect(answer.items).toEqual([]);
    expect(answer.buckets.missing).toBe(0);
    expect(answer.coverage).toBe('partial');
    // Answered from the store next time, the third copy is still unread: no call, still partial.
    const again = await service.answer(query({ usernames: ['bob'] }));
    expect(calls).toHaveLength(2);
    expect(again.coverage).toBe('partial');
  });

  it('answers the same query again from the store without calling a miner', async () => {
    const { service, calls } = setUp([miner(1), miner(2)]);
    const first = await service.answer(query());
    const again = await service.answer(query());
    expect(calls).toHaveLength(2);
    expect(again.items).toEqual(first.items);
    expect(again.buckets).toEqual({ planned: 2, fromStore: 2, fetchedNow: 0, missing: 0 });
    expect(again.miners.queried).toBe(0);
  });

  it('drops what a miner sends outside the bucket’s hour or label, and costs it credibility', async () => {
    const liar = miner(2);
    liar.answer = (asked) =>
      asked.map((id, n) => [
        id,
        [
          tweet(90_000 + n, id.time_bucket.id - 5, '#tao'),
          tweet(91_000 + n, id.time_bucket.id, '#other'),
          'garbage',
        ],
      ]);
    const { service, scores } = setUp([miner(1), liar]);
    const answer = await service.answer(query({ limit: 100 }));
    expect(answer.items.every((item) => !/status\/9\d{4}$/.test(item.uri))).toBe(true);
    expect(answer.items).toHaveLength(30);
    expect(answer.itemsDroppedInvalid).toBe(9);
    expect(answer.miners).toMatchObject({ responded: 2, passedChecks: 1 });
    expect(answer.consensus).toBe(0);
    expect(scores.find((score) => score.uid === 2)?.score).toBe(0);
    expect(scores.find((score) => score.uid === 1)?.score).toBe(1);
  });

  // Its budget is a handful of calls an hour (8 beside a validator): each ask spent one on the
  // same lie, the delivery not being kept (deliveriesToKeep).
  it('asks a holder whose delivery the checks dropped whole not again for those buckets within the hour', async () => {
    const liar = miner(1);
    liar.answer = (asked) =>
      asked.map((id, n) => [id, [tweet(91_000 + n, id.time_bucket.id, '#other')]]);
    const { service, calls, clock } = setUp([liar]);
    const first = await service.answer(query());
    expect(first.miners.failed.reasons).toEqual({ invalid_items: 1 });

    const again = await service.answer(query());

    expect(calls).toHaveLength(1);
    expect(again).toMatchObject({ items: [], buckets: { missing: 2 }, miners: { queried: 0 } });
    expect(again.error).toMatch(/failed the checks/);
    // An hour on, its index re-read and its budget renewed, it is asked again.
    clock.advance(61 * 60_000);
    await service.answer(query());
    expect(calls).toHaveLength(2);
  });

  it('asks another holder, not the one that lied, for the buckets it lied about', async () => {
    const liar = miner(1);
    const honest = miner(2);
    let lying = true;
    liar.answer = (asked) =>
      asked.map((id, n) => [id, lying ? [tweet(91_000 + n, id.time_bucket.id, '#other')] : []]);
    honest.fails = new MinerCallError('timeout', 'timed out');
    const { service, calls } = setUp([liar, honest]);
    await service.answer(query());
    honest.fails = undefined;
    lying = false;

    await service.answer(query());

    expect(calls.map((call) => call.uid)).toEqual([1, 2, 2]);
  });

  it('answers at the deadline with what arrived; a late delivery still lands in the store', async () => {
    const slow = miner(2);
    slow.delayMs = DEADLINE_MS + 200;
    const fast = miner(1);
    fast.holds.clear();
    const { service, store } = setUp([fast, slow]);
    const answer = await service.answer(query(), 'user', DEADLINE_MS);
    expect(answer).toMatchObject({
      items: [],
      deadlineReached: true,
      buckets: { planned: 2, fetchedNow: 0, missing: 2 },
      miners: { queried: 1, responded: 0, failed: { count: 1, reasons: { timeout: 1 } } },
    });
    expect(answer.error).toMatch(/answered in time/);
    // Lands about 200 ms later; longer on a loaded machine (a fixed 400 ms wait could miss it).
    await until(() => Promise.resolve(store.items.size >= 20 || undefined), 10_000);
    expect(store.items.size).toBe(20);
  });

  it('counts the planning in the deadline: a fetch still running once planning used it up is cut at once', async () => {
    const slow = miner(1);
    slow.delayMs = 150;
    const { service, store } = setUp([slow], { holdingsDelayMs: DEADLINE_MS + 50 });
    const answer = await service.answer(query(), 'user', DEADLINE_MS);
    expect(answer).toMatchObject({ items: [], deadlineReached: true });
    await until(() => Promise.resolve(store.items.size >= 20 || undefined), 10_000);
  });

  it('reaches no deadline when planning outlasts it and every bucket is already stored', async () => {
    const { service, calls } = setUp([miner(1)], { holdingsDelayMs: DEADLINE_MS + 50 });
    await service.answer(query());
    const answer = await service.answer(query(), 'user', DEADLINE_MS);
    expect(calls).toHaveLength(1);
    expect(answer).toMatchObject({
      deadlineReached: false,
      buckets: { planned: 2, fromStore: 2, missing: 0 },
    });
    expect(answer.items).toHaveLength(15);
  });

  it('fetches a bucket once for concurrent queries of this process', async () => {
    const slow = miner(1);
    slow.delayMs = 50;
    const { service, calls } = setUp([slow]);
    const [one, two] = await Promise.all([service.answer(query()), service.answer(query())]);
    expect(calls).toHaveLength(1);
    expect(one.items).toHaveLength(15);
    expect(two.items).toEqual(one.items);
    expect(two.buckets.fetchedNow).toBe(2);
  });

  it('without a label fetches nothing and answers, partially, from what is stored', async () => {
    const { service, calls } = setUp([miner(1), miner(2, '#btc')]);
    await service.answer(query({ keywords: ['#tao'], limit: 5 }));
    await service.answer(query({ keywords: ['#btc'], limit: 5 }));
    const before = calls.length;
    const answer = await service.answer(query({ keywords: ['post'], limit: 100 }));
    expect(calls).toHaveLength(before);
    expect(answer.coverage).toBe('partial');
    expect(answer.buckets.planned).toBe(0);
    expect(new Set(answer.items.map((item) => item.label))).toEqual(new Set(['#tao', '#btc']));
  });

  it('filters by username in the store and by keyword, all or any, up to the limit', async () => {
    const mixed = miner(1);
    const hour = HOURS[0];
    mixed.holds.set(bucketKeyOf(bucket('#tao', hour)), [
      tweet(1, hour, '#tao', 'alice'),
      tweet(2, hour, '#tao', 'bob'),
      JSON.parse(
        JSON.stringify(tweet(3, hour, '#tao', 'bob')).replace('post 3', 'post 3 moon'),
      ) as string,
    ]);
    const { service } = setUp([mixed]);
    const bob = await service.answer(query({ usernames: ['@Bob'], limit: 100 }));
    expect(bob.items.map((item) => item.uri).sort()).toEqual([
      'https://x.com/bob/status/2',
      'https://x.com/bob/status/3',
    ]);
    const moon = await service.answer(query({ keywords: ['#tao', 'moon'], limit: 100 }));
    expect(moon.items.map((item) => item.uri)).toEqual(['https://x.com/bob/status/3']);
    const any = await service.answer(
      query({ keywords: ['#nothing', 'moon'], keywordMode: 'any', limit: 100 }),
    );
    expect(any.coverage).toBe('partial');
    expect(any.items.map((item) => item.uri)).toEqual(['https://x.com/bob/status/3']);
  });

  it('reads a store hit in one page of the limit from the chosen hours, and pages on while filters reject items', async () => {
    const moon = miner(1);
    const hour = HOURS[2];
    const contents = moon.holds.get(bucketKeyOf(bucket('#tao', hour)))!;
    // The oldest post of the oldest hour is the only one saying "moon".
    contents[0] = contents[0].replace('post 201', 'post 201 moon');
    const { service, store } = setUp([moon]);
    await service.answer(query({ limit: 30 }));
    const limits: number[] = [];
    const froms: (Date | null)[] = [];
    const findPage = store.findPage.bind(store);
    store.findPage = (asked) => (limits.push(asked.limit), froms.push(asked.from), findPage(asked));
    const hit = await service.answer(query({ limit: 15 }));
    expect(hit.items).toHaveLength(15);
    expect(limits).toEqual([15]);
    // No dates: only the two newest hours (10 posts each) are read, not the 30 days.
    expect(froms).toEqual([bucketStart(HOURS[1])]);
    limits.length = 0;
    froms.length = 0;
    const filtered = await service.answer(query({ keywords: ['#tao', 'moon'], limit: 5 }));
    expect(filtered.items.map((item) => item.uri)).toEqual(['https://x.com/alice/status/201']);
    // The plan's target first (4 × the limit: the filter thins the label out) from the chosen
    // hours, then larger pages over the rest of the range.
    expect(limits).toEqual([20, 500]);
    expect(froms[0]).toEqual(bucketStart(HOURS[1]));
    expect(froms[1]!.getTime()).toBeLessThan(bucketStart(HOURS[2]).getTime());
  });

  // A post's copies at many times can stop the store's read at its bound: what was read is
  // answered, and the answer says it is partial, not complete (a review's finding).
  it('answers a read the store cut at its bound on rows as partial, and reads no further', async () => {
    const { service, store } = setUp([miner(1)]);
    expect((await service.answer(query({ limit: 30 }))).coverage).toBe('complete');
    const findPage = store.findPage.bind(store);
    let reads = 0;
    store.findPage = async (asked) => (reads++, { ...(await findPage(asked)), cut: true });
    const cut = await service.answer(query({ limit: 30 }));
    expect(cut.coverage).toBe('partial');
    expect(cut.items.length).toBeGreaterThan(0);
    expect(reads).toBe(1);
  });

  it('reads the range older than the chosen hours when they hold fewer items than claimed', async () => {
    const { service, store } = setUp([miner(1)]);
    await service.answer(query({ limit: 30 }));
    // The newest hour's items are gone from the store (dropped, say), its fetch row remains.
    for (const [uri, entry] of store.items)
      if (timeBucketId(new Date(entry.item.datetime)) === HOURS[0]) store.items.delete(uri);
    const froms: (Date | null)[] = [];
    const findPage = store.findPage.bind(store);
    store.findPage = (asked) => (froms.push(asked.from), findPage(asked));
    const hit = await service.answer(query({ limit: 10 }));
    expect(hit.buckets.fromStore).toBe(1);
    expect(hit.items).toHaveLength(10);
    expect(new Set(hit.items.map((item) => timeBucketId(new Date(item.datetime))))).toEqual(
      new Set([HOURS[1]]),
    );
    expect(froms[0]).toEqual(bucketStart(HOURS[0]));
  });

  it('says when a labelled query found no bucket because no index is loaded', async () => {
    const { service } = setUp([], { indexLoaded: false });
    const empty = await service.answer(query());
    expect(empty).toMatchObject({
      items: [],
      indexLoaded: false,
      coverage: 'partial',
      buckets: { planned: 0, fromStore: 0, fetchedNow: 0, missing: 0 },
    });
    expect(empty.error).toBeUndefined();
  });

  it('with no index loaded any more, still answers what the store holds of the labels', async () => {
    const holders = [miner(1), miner(2)];
    const { service } = setUp(holders);
    const fetched = await service.answer(query());
    expect(fetched.items).toHaveLength(15);
    holders.length = 0; // every index dropped: anyIndexLoaded() is false
    const again = await service.answer(query());
    expect(again).toMatchObject({ indexLoaded: false, coverage: 'partial' });
    expect(again.items).toEqual(fetched.items);
  });

  it('a labelled query that no miner of a loaded index holds is a true "no data"', async () => {
    const { service } = setUp([], { indexLoaded: true });
    expect(await service.answer(query())).toMatchObject({
      items: [],
      indexLoaded: true,
      coverage: 'complete',
    });
  });

  it('asks no miner whose budget is spent, and says why when nothing is stored', async () => {
    const { service, calls } = setUp([miner(1)], { callsLeft: 0 });
    const answer = await service.answer(query());
    expect(calls).toHaveLength(0);
    expect(answer.items).toEqual([]);
    expect(answer.buckets).toMatchObject({ planned: 2, missing: 2 });
    expect(answer.error).toMatch(/call budgets are spent/);
  });

  // The live path said when; this answer left a client guessing (a budgets audit's finding).
  it('says when the first call of the spent holders frees up', async () => {
    const freeAt = (hotkey: string) =>
      new Date(hotkey === 'hk1' ? '2026-12-06T06:30:00Z' : '2026-12-06T06:10:00Z');
    const { service } = setUp([miner(1), miner(2)], { callsLeft: 0, nextAt: freeAt });
    const answer = await service.answer(query());
    expect(answer.error).toMatch(
      /call budgets are spent.*; the first call frees up at 2026-12-06T06:10:00\.000Z$/,
    );
  });

  it('counts a miner that refuses or fails, and one that sends nothing', async () => {
    const refusing = miner(1);
    refusing.fails = new MinerCallError('blacklisted', 'HTTP 403');
    const empty = miner(2);
    empty.answer = (asked) => asked.map((id) => [id, []]);
    const { service, scores } = setUp([refusing, empty]);
    const answer = await service.answer(query());
    expect(answer.miners).toMatchObject({
      queried: 2,
      responded: 1,
      empty: 1,
      passedChecks: 0,
      failed: { count: 1, reasons: { blacklisted: 1 } },
    });
    // A refusal says nothing of the miner; an empty answer to a claimed bucket does.
    expect(scores.filter((entry) => entry.score !== null)).toEqual([
      { uid: 2, hotkey: 'hk2', score: 0 },
    ]);
  });

  it('says nobody answered with the data, not that nobody answered in time, when every call failed', async () => {
    const unreachable = miner(1);
    unreachable.fails = new MinerCallError('network', 'connect ECONNREFUSED');
    const { service } = setUp([unreachable]);
    const answer = await service.answer(query());
    expect(answer.deadlineReached).toBe(false);
    expect(answer.error).toBe(
      "No miner holding this query's data answered with it (1 asked; meta.miners_failed.reasons says why)",
    );
  });
  it('asks no holder that refused the synapse or whose circuit is open', async () => {
    // Asking a miner that refused us again within the hour gets the hotkey penalised.
    const { service, calls } = setUp([miner(1), miner(2), miner(3)], {
      refused: [1],
      circuitOpen: [2],
    });
    await service.answer(query());
    expect(calls.map((call) => call.uid)).toEqual([3]);
  });

  it('asks no holder while the stored metagraph, whose miners the index lists, is not in use', async () => {
    const { service, calls } = setUp([miner(1), miner(2)], {
      storedNotInUse: 'the stored metagraph is another source’s',
    });
    const answer = await service.answer(query());
    expect(calls).toEqual([]);
    expect(answer.items).toEqual([]);
    // The public words, not the operator's detail.
    expect(answer.error).toBe('No miners available: the stored metagraph is another source’s');
  });

  it("reads the budgets for a task's query as a task's, which leaves users their reserve", async () => {
    const { service, budgetReads, calls } = setUp([miner(1)]);
    await service.answer(query(), 'task');
    expect(calls).toHaveLength(1);
    expect(budgetReads).toEqual(['task']);
  });

  it('asks no holder claiming more than half of MINER_MAX_RESPONSE_BYTES for a bucket', async () => {
    // Contents travel as escaped JSON strings: an answer that size would pass the response cap.
    const big = { ...miner(1), claims: 10 * 1024 * 1024 };
    const { service, calls } = setUp([big]);
    await service.answer(query());
    expect(calls).toEqual([]);
  });

  it('makes at most twice MINERS_PER_QUERY calls for a query', async () => {
    // Three hours, each held by one miner only: three calls, were it not for the cap of two.
    const alone = [1, 2, 3].map((uid, index) => {
      const fake = miner(uid);
      const kept = [...fake.holds].filter((_, n) => n === index);
      fake.holds = new Map(kept);
      return fake;
    });
    const { service, calls } = setUp(alone, { minersPerQuery: 1 });
    await service.answer(query({ limit: 25 }));
    expect(calls).toHaveLength(2);
  });

  it('fetches a bucket again for a later query when the earlier fetch failed', async () => {
    const flaky = miner(1);
    flaky.fails = new MinerCallError('timeout', 'timed out');
    const { service, calls } = setUp([flaky]);
    await service.answer(query());
    flaky.fails = undefined;
    const answer = await service.answer(query());
    expect(calls).toHaveLength(2);
    expect(answer.items).toHaveLength(15);
  });
});

// The fake builds its own wire ids; keep it honest about the real shape.
it('the fake miners echo wire bucket ids', () => {
  expect(wireBucketId(bucket('#tao', 1))).toEqual({
    time_bucket: { id: 1 },
    source: 2,
    label: { value: '#tao' },
  });
});

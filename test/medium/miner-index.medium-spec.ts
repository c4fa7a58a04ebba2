import fc from 'fast-check';
import { DataSource } from 'typeorm';
import { IndexRow, parseCompressedIndex } from '../../src/network/index/compressed-index';
import { MinerIndexReadRepository } from '../../src/network/index/miner-index-read.repository';
import { MinerIndexRepository } from '../../src/network/index/miner-index.repository';
import { MinerIndexService } from '../../src/network/index/miner-index.service';
import { CredibilityRecorder } from '../../src/network/credibility-recorder';
import { MetagraphService } from '../../src/network/metagraph/metagraph.service';
import { MinersRepository } from '../../src/network/miners.repository';
import { timeBucketId } from '../../src/network/protocol';
import { SourceId } from '../../src/network/sources';
import { aggregatesAndGroupBys, expectAggregatesExact } from '../support/index-aggregates';
import { MediumDatabase, openMediumDatabase } from '../support/medium-database';
import { metagraphNeuron } from '../support/neurons';
import { minerIndexOn } from '../support/miner-index';
import { testConfig } from '../support/test-config';

const UIDS = [0, 1, 2];
const LABELS = ['#a', '#b', 'r/c', 'r/d', null];
const HOUR = 490_000;
/** A circuit's cooldown longer than any test here. */
const COOLDOWN_MS = 60_000;

/** A miner's index as the parser emits it: distinct (source, label, hour), sizes > 0. */
const indexRows = fc
  .uniqueArray(
    fc.record({
      source: fc.constantFrom<SourceId>(1, 2),
      label: fc.constantFrom(...LABELS),
      timeBucket: fc.integer({ min: HOUR, max: HOUR + 5 }),
      bytes: fc.integer({ min: 1, max: 2 ** 40 }),
    }),
    {
      maxLength: 40,
      selector: (row) => `${row.source}|${row.label}|${row.timeBucket}`,
    },
  )
  // Shuffled groups: the repository must not rely on the parser's grouping for correctness.
  .chain((rows) => fc.shuffledSubarray(rows, { minLength: rows.length }));

const operation = fc.oneof(
  fc.record({ replace: fc.constantFrom(...UIDS), rows: indexRows }),
  fc.record({ credibility: fc.constantFrom(...UIDS), value: fc.double({ min: 0, max: 1 }) }),
);

describe(`${MinerIndexRepository.name} and ${MinerIndexReadRepository.name}`, () => {
  let medium: MediumDatabase;
  let database: DataSource;
  let repository: MinerIndexRepository;
  let service: MinerIndexService;
  let miners: MinersRepository;

  beforeAll(async () => {
    // A database of its own: the spec owns the miners table and the network totals.
    medium = await openMediumDatabase({ own: 'index' });
    database = medium.dataSource;
    ({ repository, service } = minerIndexOn(database));
    miners = new MinersRepository(database, service);
    await miners.syncNeurons(UIDS.map((uid) => metagraphNeuron(uid, { axon_url: null })));
  });
  afterAll(() => medium.close());

  async function indexOf(uid: number) {
    return database.query<Record<string, unknown>[]>(
      `SELECT source, label_id, time_bucket, content_size_bytes FROM miner_index WHERE miner_uid = $1 ORDER BY 1, 2, 3`,
      [uid],
    );
  }

  it('keeps every aggregate equal to a GROUP BY over the index through replaces and credibility changes', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(operation, { minLength: 1, maxLength: 4 }), async (operations) => {
        for (const op of operations) {
          if ('replace' in op) {
            await repository.replaceMinerIndex(op.replace, op.rows);
            expect(await indexOf(op.replace)).toHaveLength(op.rows.length);
          } else {
            // Through the service's own path, which moves the adjusted totals incrementally.
            await miners.applyCredibilityUpdates([
              { uid: op.credibility, hotkey: `hotkey-${op.credibility}`, decay: 0, add: op.value },
            ]);
          }
        }
        await expectAggregatesExact(database);
      }),
      { numRuns: 25 },
    );
  });

  it('reads labels it already stored instead of inserting them again, which would use up ids', async () => {
    const now = new Date();
    const rows: IndexRow[] = ['#seq-a', '#seq-b', 'r/seq-c'].map((label, index) => ({
      source: label.startsWith('#') ? 2 : 1,
      label,
      timeBucket: timeBucketId(now),
      bytes: index + 1,
    }));
    const sequence = async () =>
      Number(
        (
          await database.query<{ value: string }[]>(
            `SELECT last_value::text AS value FROM labels_id_seq`,
          )
        )[0].value,
      );
    await repository.replaceMinerIndex(1, rows);
    const after = await sequence();
    // A writer whose cache does not hold them (another replica, a restart, an eviction).
    const fresh = minerIndexOn(database).repository;
    for (let round = 0; round < 3; round++) await fresh.replaceMinerIndex(1, rows);
    expect(await sequence()).toBe(after);
    await expectAggregatesExact(database);
  });

  // An index at MINER_MAX_INDEX_RESPONSE_BYTES holds ~350,000 labels; spread into one push as
  // arguments, 130,000 new ones overflowed the stack, and such a miner's index was never stored
  // (an event-loop audit).
  it('stores an index with 200,000 labels new to the database', async () => {
    const hour = timeBucketId(new Date());
    const rows: IndexRow[] = Array.from({ length: 200_000 }, (_, index) => ({
      source: 2,
      label: `#many-${index}`,
      timeBucket: hour,
      bytes: 1,
    }));
    await repository.replaceMinerIndex(2, rows);
    expect(await indexOf(2)).toHaveLength(rows.length);
    await repository.replaceMinerIndex(2, []);
  }, 60_000);

  it('stores an index whose labels Postgres cannot store, without those entries', async () => {
    const now = new Date();
    const entry = (label: string, bytes: number) =>
      `{"label": "${label}", "time_bucket_ids": [${timeBucketId(now)}], "sizes_bytes": [${bytes}]}`;
    // As a miner's JSON carries them: escapes of U+0000 and of unpaired surrogates.
    const body = `{"sources": {"2": [${entry('#nul\\u0000', 1)}, ${entry('#lone\\ud83d', 2)}, ${entry('#kept', 4)}], "1": [${entry('r/\\udc00', 8)}]}}`;

    await repository.replaceMinerIndex(0, parseCompressedIndex(JSON.parse(body), now));

    const stored = await database.query<{ label: string; bytes: string }[]>(
      `SELECT l.value AS label, i.content_size_bytes::text AS bytes
       FROM miner_index i JOIN labels l ON l.id = i.label_id WHERE i.miner_uid = 0`,
    );
    expect(stored).toEqual([{ label: '#kept', bytes: '4' }]);
    await expectAggregatesExact(database);
  });

  it('keeps the totals exact when miners replace their indexes concurrently', async () => {
    const rows = (uid: number): IndexRow[] =>
      LABELS.flatMap((label, i) => [
        { source: 2, label, timeBucket: HOUR + i, bytes: 1000 * (uid + 1) + i },
        { source: 1, label, timeBucket: HOUR + uid, bytes: 77 * (uid + 2) },
      ]);
    await Promise.all(UIDS.map((uid) => repository.replaceMinerIndex(uid, rows(uid))));
    await Promise.all(UIDS.map((uid) => repository.replaceMinerIndex(uid, rows(uid + 1))));
    await expectAggregatesExact(database);
  });

  // The statistics are cached per version (stats.service.ts): a write of the totals that left
  // it where it was would have every replica serve the old figures until the cache expired.
  it('moves the totals version to a new value with every write of the totals', async () => {
    const versions = [await service.totalsVersion()];
    const moved = async () => {
      const version = await service.totalsVersion();
      const isNew = !versions.includes(version);
      versions.push(version);
      return isNew;
    };
    await repository.replaceMinerIndex(1, [{ source: 2, label: '#a', timeBucket: HOUR, bytes: 5 }]);
    expect(await moved()).toBe(true);
    await miners.applyCredibilityUpdates([{ uid: 1, hotkey: 'hotkey-1', decay: 0, add: 0.25 }]);
    expect(await moved()).toBe(true);
    expect(await service.dropHoursBefore(HOUR + 1)).toBeGreaterThan(0);
    expect(await moved()).toBe(true);
  });

  it('leaves the previous index and every total untouched when a replace fails midway', async () => {
    const before = { index: await indexOf(2), all: await aggregatesAndGroupBys(database) };
    // The replace fails at its last step (no miner row to update), after the TRUNCATE, the
    // COPY, the index build and the swap of the miner's own totals.
    await database.query('UPDATE miners SET uid = 999 WHERE uid = 2');
    try {
      await expect(
        repository.replaceMinerIndex(2, [{ source: 2, label: '#new', timeBucket: HOUR, bytes: 5 }]),
      ).rejects.toThrow('unknown miner 2');
    } finally {
      await database.query('UPDATE miners SET uid = 2 WHERE uid = 999');
    }
    expect(await indexOf(2)).toEqual(before.index);
    expect(await aggregatesAndGroupBys(database)).toEqual(before.all);
  });

  it('stores the rows of a partition in the order of its lookup index', async () => {
    await repository.replaceMinerIndex(1, [
      { source: 2, label: '#b', timeBucket: HOUR + 2, bytes: 1 },
      { source: 2, label: '#b', timeBucket: HOUR + 1, bytes: 2 },
      { source: 1, label: null, timeBucket: HOUR, bytes: 3 },
      { source: 1, label: '#a', timeBucket: HOUR + 3, bytes: 4 },
      { source: 2, label: '#a', timeBucket: HOUR, bytes: 5 },
    ]);
    const physical = await database.query<
      { source: number; label_id: number | null; time_bucket: number }[]
    >('SELECT source, label_id, time_bucket FROM miner_index_p1 ORDER BY ctid');
    const sorted = [...physical].sort(
      (a, b) =>
        a.source - b.source ||
        (a.label_id ?? Infinity) - (b.label_id ?? Infinity) ||
        a.time_bucket - b.time_bucket,
    );
    expect(physical).toEqual(sorted);
    await expectAggregatesExact(database);
  });

  it('lists the holders of labels over an hour range, newest hours first, most credible first', async () => {
    await database.query(
      `UPDATE miners SET axon_url = 'http://127.0.0.1:' || (9000 + uid), state = 'active',
         credibility = CASE uid WHEN 0 THEN 0.5 WHEN 1 THEN 0.9 ELSE 0.7 END`,
    );
    const rows = (bytes: number): IndexRow[] => [
      { source: 2, label: '#a', timeBucket: HOUR, bytes },
      { source: 2, label: '#a', timeBucket: HOUR + 2, bytes: bytes + 1 },
      { source: 2, label: '#b', timeBucket: HOUR + 2, bytes: bytes + 2 },
      { source: 2, label: null, timeBucket: HOUR + 1, bytes: bytes + 3 },
      { source: 2, label: '#c', timeBucket: HOUR + 3, bytes: bytes + 4 },
      { source: 1, label: '#a', timeBucket: HOUR + 3, bytes: bytes + 5 },
    ];
    await Promise.all(UIDS.map((uid) => repository.replaceMinerIndex(uid, rows(100 * uid + 10))));
    // An hour only a failing miner holds is not among the newest hours.
    await repository.replaceMinerIndex(2, [
      ...rows(210),
      { source: 2, label: '#a', timeBucket: HOUR + 3, bytes: 7 },
    ]);
    await miners.setState(metagraphNeuron(2), 'failing', COOLDOWN_MS);
    const holdings = await service.holdings(2, ['#a', '#b', null], HOUR, HOUR + 3, 10);
    expect(
      holdings.map((row) => [row.timeBucket, row.label, row.uid, row.coldkey, row.bytes]),
    ).toEqual([
      [HOUR + 2, '#a', 1, 'coldkey-1', 111],
      [HOUR + 2, '#a', 0, 'coldkey-0', 11],
      [HOUR + 2, '#b', 1, 'coldkey-1', 112],
      [HOUR + 2, '#b', 0, 'coldkey-0', 12],
      [HOUR + 1, null, 1, 'coldkey-1', 113],
      [HOUR + 1, null, 0, 'coldkey-0', 13],
      [HOUR, '#a', 1, 'coldkey-1', 110],
      [HOUR, '#a', 0, 'coldkey-0', 10],
    ]);
    expect(holdings[0]).toMatchObject({ hotkey: 'hotkey-1', axonUrl: 'http://127.0.0.1:9001' });
    expect(holdings[0].credibility).toBeCloseTo(0.9);
    // Paged by hours: the newest hour holding any, then on below it.
    const newest = await service.holdings(2, ['#a', '#b'], HOUR, HOUR + 3, 1);
    expect(new Set(newest.map((row) => row.timeBucket))).toEqual(new Set([HOUR + 2]));
    expect(newest).toHaveLength(4);
    // The newest hours of each label first, then the newest of those over every label.
    const hoursOf = async (labels: (string | null)[]) =>
      new Set((await service.holdings(2, labels, HOUR, HOUR + 3, 1)).map((row) => row.timeBucket));
    expect(await hoursOf(['#a'])).toEqual(new Set([HOUR + 2]));
    expect(await hoursOf(['#a', null])).toEqual(new Set([HOUR + 2]));
    expect(await service.holdings(2, ['#a'], HOUR, HOUR + 1, 5)).toHaveLength(2);
    expect(await service.holdings(2, [], HOUR, HOUR + 3, 5)).toEqual([]);
  });
  it('finds the largest bucket of an hour at its most credible holders without reading their index', async () => {
    await database.query(
      `UPDATE miners SET axon_url = 'http://127.0.0.1:' || (9000 + uid), state = 'active',
         credibility = CASE uid WHEN 0 THEN 0.5 WHEN 1 THEN 0.9 ELSE 0.7 END`,
    );
    // Many labels over many hours, as a real index has: the hour asked for is one of them.
    const rows = (uid: number): IndexRow[] =>
      Array.from({ length: 400 }, (_, i) => i).flatMap((i) => [
        { source: 2, label: `#l${i}`, timeBucket: HOUR + (i % 10), bytes: 1000 + i },
        { source: 1, label: `r/l${i}`, timeBucket: HOUR + (i % 10), bytes: 5000 + i + uid },
      ]);
    await repository.replaceMinerIndex(0, rows(0));
    await repository.replaceMinerIndex(1, [
      ...rows(1),
      { source: 2, label: null, timeBucket: HOUR + 3, bytes: 9000 },
    ]);
    await repository.replaceMinerIndex(2, rows(2));
    // Every statement the repository sends, to be explained below.
    const sent: { sql: string; params: unknown[] }[] = [];
    const recording = new MinerIndexReadRepository({
      query: (sql: string, params: unknown[] = []) => {
        sent.push({ sql, params });
        return database.query(sql, params);
      },
    } as unknown as DataSource);

    const holders = await recording.holders(2, undefined, HOUR + 3, 2);

    expect(holders.map(({ uid, label, bytes }) => ({ uid, label, bytes }))).toEqual([
      { uid: 1, label: null, bytes: 9000 },
      { uid: 2, label: '#l393', bytes: 1393 },
    ]);
    const [{ sql, params }] = sent;
    const [{ 'QUERY PLAN': plan }] = await database.query<{ 'QUERY PLAN': unknown }[]>(
      `EXPLAIN (FORMAT JSON) ${sql}`,
      params,
    );
    const relations = JSON.stringify(plan).match(/"Relation Name":"[^"]+"/g) ?? [];
    expect(relations.filter((relation) => relation.includes('miner_index'))).toEqual([]);
  });

  // The spot checks choose among stored indexes too (IndexSpotChecks): a miner's claimed bytes,
  // and a bucket sampled by its claimed size, read from its stored index.
  it("reads a stored index's claimed bytes, and samples its buckets by their claimed size", async () => {
    const rows: IndexRow[] = [
      { source: 2, label: '#a', timeBucket: HOUR, bytes: 100 },
      { source: 2, label: null, timeBucket: HOUR + 1, bytes: 300 },
      { source: 1, label: 'r/c', timeBucket: HOUR, bytes: 600 },
    ];
    await repository.replaceMinerIndex(0, rows);
    await repository.replaceMinerIndex(1, []);
    expect(await service.claimedBytes([0, 1])).toEqual(new Map([[0, 1000]]));

    const counts = new Map<number, number>();
    for (let draw = 0; draw < 400; draw++) {
      const sampled = (await service.sampleBucket(0))!;
      expect(rows).toContainEqual(sampled);
      counts.set(sampled.bytes, (counts.get(sampled.bytes) ?? 0) + 1);
    }
    // 40, 120 and 240 expected: uniform draws give 133 each.
    expect(counts.get(100)).toBeLessThan(80);
    expect(counts.get(600)).toBeGreaterThan(190);
    expect(await service.sampleBucket(1)).toBeUndefined();
  });

  it('answers the statistics from the totals: sums per source, credibility-weighted, in their order', async () => {
    // Emptied first, at the credibility they were counted at, then given fixed ones.
    for (const uid of UIDS) await repository.replaceMinerIndex(uid, []);
    await database.query(
      `UPDATE miners SET axon_url = 'http://127.0.0.1:' || (9000 + uid), state = 'active',
         credibility = CASE uid WHEN 0 THEN 0.5 WHEN 1 THEN 0.9 ELSE 0.7 END`,
    );
    await repository.replaceMinerIndex(0, [
      { source: 2, label: '#b', timeBucket: HOUR + 1, bytes: 80 },
    ]);
    await repository.replaceMinerIndex(1, [
      { source: 2, label: '#a', timeBucket: HOUR + 1, bytes: 100 },
      { source: 2, label: '#b', timeBucket: HOUR + 2, bytes: 100 },
      { source: 1, label: '#a', timeBucket: HOUR + 3, bytes: 40 },
      { source: 1, label: 'r/c', timeBucket: HOUR, bytes: 50 },
    ]);
    await repository.replaceMinerIndex(2, [
      { source: 2, label: '#d', timeBucket: HOUR, bytes: 10 },
      { source: 2, label: '#c', timeBucket: HOUR, bytes: 10 },
      { source: 2, label: '#b', timeBucket: HOUR + 1, bytes: 5 },
    ]);

    const labels = await service.topLabels(2, 1000);
    // Largest adjusted size first; equal ones by label, so the list is the same at every call.
    expect(labels.map((row) => [row.label_value, Number(row.content_size_bytes)])).toEqual([
      ['#b', 185],
      ['#a', 100],
      ['#c', 10],
      ['#d', 10],
    ]);
    // Float sums: compared to the millionth.
    const micro = (value: number) => Math.round(value * 1e6) / 1e6;
    expect(labels.map((row) => micro(row.adj_content_size_bytes))).toEqual([133.5, 90, 7, 7]);
    expect(await service.topLabels(2, 2)).toHaveLength(2);

    const ages = await service.ages(2, HOUR, 1000);
    expect(ages.map((row) => [row.time_bucket_id, Number(row.content_size_bytes)])).toEqual([
      [HOUR + 2, 100],
      [HOUR + 1, 185],
      [HOUR, 20],
    ]);
    expect(ages.map((row) => micro(row.adj_content_size_bytes))).toEqual([90, 133.5, 14]);
    // From the oldest hour asked for on: older ones are still in the totals, not listed.
    const newer = await service.ages(2, HOUR + 1, 1000);
    expect(newer.map((row) => row.time_bucket_id)).toEqual([HOUR + 2, HOUR + 1]);

    // A label's bytes are summed over both sources.
    const a = await service.bytesByLabel('#a');
    expect(a.bytes).toBe(140);
    expect(a.adjBytes).toBeCloseTo(126, 6);

    // Ranges include both ends; the newest hour in them is the one fetched.
    const b = (await service.labelId('#b'))!;
    expect(await service.latestBucket(2, undefined, HOUR, HOUR + 1)).toBe(HOUR + 1);
    expect(await service.latestBucket(2, undefined, HOUR, HOUR + 3)).toBe(HOUR + 2);
    expect(await service.latestBucket(2, b, HOUR, HOUR + 1)).toBe(HOUR + 1);
    expect(await service.latestBucket(2, b, HOUR, HOUR + 2)).toBe(HOUR + 2);
    expect(await service.latestBucket(2, b, HOUR + 3, HOUR + 5)).toBeUndefined();

    // Holders most credible first; a failing miner is not asked.
    const holders = async (labelId: number | undefined) =>
      (await service.holders(2, labelId, HOUR + 1, 10)).map((row) => [row.uid, row.bytes]);
    expect(await holders(b)).toEqual([
      [2, 5],
      [0, 80],
    ]);
    expect(await holders(undefined)).toEqual([
      [1, 100],
      [2, 5],
      [0, 80],
    ]);
    await miners.setState(metagraphNeuron(2), 'failing', COOLDOWN_MS);
    expect(await holders(b)).toEqual([[0, 80]]);
    expect(await holders(undefined)).toEqual([
      [1, 100],
      [0, 80],
    ]);

    // query_bucket's hour is the newest one a miner that may be asked holds: an hour held only by
    // a failing miner was chosen, and no holder was asked (an audit's finding).
    const d = (await service.labelId('#d'))!;
    expect(await service.latestBucket(2, d, HOUR, HOUR + 2)).toBeUndefined();
    await miners.setState(metagraphNeuron(1), 'failing', COOLDOWN_MS);
    expect(await service.latestBucket(2, b, HOUR, HOUR + 2)).toBe(HOUR + 1);
    expect(await service.latestBucket(2, undefined, HOUR, HOUR + 3)).toBe(HOUR + 1);
    // Any holder's hours, and holders, when the askable ones are not what is asked: query_bucket
    // reads an earlier fetch under their labels, or says none can be asked (an error texts audit).
    const everyHolder = { askable: false };
    expect(await service.latestBucket(2, b, HOUR, HOUR + 2, everyHolder)).toBe(HOUR + 2);
    expect(await service.latestBucket(2, undefined, HOUR, HOUR + 3, everyHolder)).toBe(HOUR + 2);
    expect(await service.holders(2, b, HOUR + 2, 10)).toEqual([]);
    expect((await service.holders(2, b, HOUR + 2, 10, everyHolder)).map((row) => row.uid)).toEqual([
      1,
    ]);
    expect(
      (await service.holders(2, undefined, HOUR + 2, 10, everyHolder)).map((row) => row.uid),
    ).toEqual([1]);
    await miners.setState(metagraphNeuron(1), 'active', COOLDOWN_MS);
    expect(await service.latestBucket(2, b, HOUR, HOUR + 2)).toBe(HOUR + 2);

    // Once only a failing miner holds an index, none is loaded that the stored-data path may ask.
    expect(await service.anyIndexLoaded()).toBe(true);
    await repository.replaceMinerIndex(0, []);
    await repository.replaceMinerIndex(1, []);
    expect(await service.anyIndexLoaded()).toBe(false);
  });
  // Only the breaker that wrote `failing` closed it again: after a restart, or on another
  // replica, a miner stayed failing for good and no stored-data call, task collection or
  // query_bucket asked it again (an audit's finding). It lasts the circuit's cooldown.
  it('asks a miner a circuit marked failing again once the cooldown is over, on any replica', async () => {
    await database.query(
      `UPDATE miners SET axon_url = 'http://127.0.0.1:' || (9000 + uid), state = 'active'`,
    );
    for (const uid of UIDS) await repository.replaceMinerIndex(uid, []);
    await repository.replaceMinerIndex(2, [{ source: 2, label: '#e', timeBucket: HOUR, bytes: 9 }]);
    const e = (await service.labelId('#e'))!;
    const askable = async () => ({
      holders: (await service.holders(2, e, HOUR, 10)).map((row) => row.uid),
      latest: await service.latestBucket(2, e, HOUR, HOUR),
      loaded: await service.anyIndexLoaded(),
    });
    // The replica whose breaker opened records it, as it does in the app.
    // A cooldown no stall of the test outlasts: its end is brought on by hand below (a real
    // 300 ms one failed if the test was held that long between the write and the look).
    const config = testConfig({
      network: { credibilityAlpha: 0.5, breakerCooldownMs: 60_000 },
    });
    const metagraph = { updateState: () => undefined } as unknown as MetagraphService;
    const recorder = new CredibilityRecorder(miners, metagraph, config);
    recorder.recordState(metagraphNeuron(2), 'failing');
    await recorder.settled();
    await recorder.beforeApplicationShutdown();
    expect(await askable()).toEqual({ holders: [], latest: undefined, loaded: false });

    // No breaker of this replica (just started, or another one) ever opened or closed for it.
    await database.query(
      `UPDATE miners SET failing_until = now() - interval '1 millisecond' WHERE uid = 2`,
    );
    expect(await askable()).toEqual({ holders: [2], latest: HOUR, loaded: true });
    await repository.replaceMinerIndex(2, []);
  });

  // What system-status' miner_index reports: a dashboard tells "nothing read yet" from "the
  // miners read hold nothing" by the last read, which an empty index sets too.
  it("reads the loaded indexes' sync times apart from the last read, an empty index included", async () => {
    const row = { source: 1 as SourceId, label: '#a', timeBucket: HOUR, bytes: 10 };
    await repository.replaceMinerIndex(0, [row]);
    await repository.replaceMinerIndex(1, [row]);
    await repository.replaceMinerIndex(2, []);
    const syncedAt = async (uid: number): Promise<Date> =>
      (
        await database.query<{ at: Date }[]>(
          'SELECT index_synced_at AS at FROM miners WHERE uid = $1',
          [uid],
        )
      )[0].at;
    // Two loaded indexes synced one after the other: the newest and the oldest are not the same.
    expect((await syncedAt(1)).getTime()).toBeGreaterThan((await syncedAt(0)).getTime());
    expect(await service.indexFreshness()).toMatchObject({
      loaded: 2,
      newestSyncedAt: await syncedAt(1),
      oldestSyncedAt: await syncedAt(0),
      lastReadAt: await syncedAt(2),
    });
    await repository.replaceMinerIndex(1, []);
    await repository.replaceMinerIndex(0, []);
    expect(await service.indexFreshness()).toMatchObject({
      loaded: 0,
      newestSyncedAt: null,
      oldestSyncedAt: null,
      lastReadAt: await syncedAt(0),
    });
  });

  // system-status' `usable` is the stored-data path's "loaded" (anyIndexLoaded) counted: indexes
  // held only by miners it may not ask made on-demand answer "not loaded yet" while system-status
  // said the index healthy. The others are counted by why, so that they add up to `loaded`.
  it('counts the loaded indexes the stored-data path may use now, and why it may not use the others', async () => {
    await database.query(
      `UPDATE miners SET axon_url = 'http://127.0.0.1:' || (9000 + uid), state = 'active', failing_until = NULL`,
    );
    const row = { source: 1 as SourceId, label: '#a', timeBucket: HOUR, bytes: 10 };
    for (const uid of UIDS) await repository.replaceMinerIndex(uid, [row]);
    const read = async () => {
      const { loaded, usable, unusable } = await service.indexFreshness();
      return { loaded, usable, unusable, storedPathLoaded: await service.anyIndexLoaded() };
    };
    const none = { failing: 0, addressRefused: 0, deregistered: 0, noAxon: 0 };
    expect(await read()).toEqual({ loaded: 3, usable: 3, unusable: none, storedPathLoaded: true });

    const before = Date.now();
    await miners.setState(metagraphNeuron(0), 'failing', COOLDOWN_MS);
    await miners.setState(metagraphNeuron(1), 'address_refused', COOLDOWN_MS);
    expect(await read()).toEqual({
      loaded: 3,
      usable: 1,
      unusable: { ...none, failing: 1, addressRefused: 1 },
      storedPathLoaded: true,
    });
    await database.query('UPDATE miners SET axon_url = NULL WHERE uid = 2');
    expect(await read()).toEqual({
      loaded: 3,
      usable: 0,
      unusable: { failing: 1, addressRefused: 1, deregistered: 0, noAxon: 1 },
      storedPathLoaded: false,
    });
    // When the first failing holder may be asked again: its circuit's cooldown.
    const { failingUntil } = await service.indexFreshness();
    expect(failingUntil!.getTime()).toBeGreaterThanOrEqual(before + COOLDOWN_MS - 50);
    expect(failingUntil!.getTime()).toBeLessThanOrEqual(Date.now() + COOLDOWN_MS + 50);
    // The metagraph sync drops a deregistered miner's index; one kept is still counted apart.
    await database.query(`UPDATE miners SET state = 'deregistered' WHERE uid = 2`);
    expect((await read()).unusable).toEqual({
      failing: 1,
      addressRefused: 1,
      deregistered: 1,
      noAxon: 0,
    });

    // A cooldown over is no failure (currentState): that holder is usable again.
    await database.query(
      `UPDATE miners SET failing_until = now() - interval '1 second' WHERE uid = 0`,
    );
    expect(await read()).toMatchObject({ usable: 1, storedPathLoaded: true });
    expect((await service.indexFreshness()).failingUntil).toBeNull();
    for (const uid of UIDS) await repository.replaceMinerIndex(uid, []);
  });
  // Labels outlived every index that named them: a miner filing fresh labels at each sync grew
  // the table by up to 350,000 rows a sync, and would use up its int4 ids.
  it('deletes the labels no index names any longer, and keeps the others and their ids', async () => {
    const row = (label: string, bytes: number): IndexRow => ({
      source: 2,
      label,
      timeBucket: HOUR,
      bytes,
    });
    await repository.replaceMinerIndex(1, [row('#kept', 5), row('#gone-a', 7), row('#gone-b', 9)]);
    const idsOf = async () =>
      new Map(
        (
          await database.query<{ value: string; id: number }[]>(
            `SELECT value, id FROM labels WHERE value = '#kept' OR value LIKE '#gone-%'`,
          )
        ).map((label) => [label.value, label.id]),
      );
    const before = await idsOf();
    expect([...before.keys()].sort()).toEqual(['#gone-a', '#gone-b', '#kept']);
    await repository.replaceMinerIndex(1, [row('#kept', 5)]);

    expect(await service.dropUnusedLabels()).toBeGreaterThanOrEqual(2);
    expect(await idsOf()).toEqual(new Map([['#kept', before.get('#kept')]]));
    expect(await service.dropUnusedLabels()).toBe(0);
    await expectAggregatesExact(database);
  });

  // Another replica's prune, or this one's: the ids this writer cached may be gone.
  it('starts a replace over whose cached label ids were deleted meanwhile, with ids that exist', async () => {
    const row: IndexRow = { source: 2, label: '#back', timeBucket: HOUR, bytes: 11 };
    await repository.replaceMinerIndex(1, [row]);
    await repository.replaceMinerIndex(1, []);
    expect(await service.dropUnusedLabels()).toBeGreaterThanOrEqual(1);

    await repository.replaceMinerIndex(1, [row]);

    const dangling = await database.query<unknown[]>(
      `SELECT i.label_id FROM miner_index i LEFT JOIN labels l ON l.id = i.label_id
       WHERE i.label_id IS NOT NULL AND l.id IS NULL`,
    );
    expect(dangling).toEqual([]);
    expect(await service.bytesByLabel('#back')).toEqual({
      bytes: 11,
      adjBytes: expect.any(Number),
    });
    await expectAggregatesExact(database);
    await repository.replaceMinerIndex(1, []);
  });
  // A cycled sequence gives a deleted label's id to a new one: a writer still caching the old
  // label under it would file its rows under the new label unless it checks the pair.
  it("starts a replace over whose cached id was given to another label, and reuses ids past the sequence's end", async () => {
    const row = (label: string, bytes = 3): IndexRow => ({
      source: 2,
      label,
      timeBucket: HOUR,
      bytes,
    });
    const other = minerIndexOn(database).repository;
    await other.replaceMinerIndex(2, [row('#stale')]);
    await other.replaceMinerIndex(2, []);
    const [{ id: staleId }] = await database.query<{ id: number }[]>(
      `SELECT id FROM labels WHERE value = '#stale'`,
    );
    expect(await service.dropUnusedLabels()).toBeGreaterThanOrEqual(1);
    // The next label takes the freed id.
    await database.query(`SELECT setval('labels_id_seq', $1, false)`, [staleId]);
    await repository.replaceMinerIndex(1, [row('#fresh', 5)]);
    expect(await service.labelId('#fresh')).toBe(staleId);

    await other.replaceMinerIndex(2, [row('#stale', 7)]);

    expect(await service.bytesByLabel('#stale')).toMatchObject({ bytes: 7 });
    expect(await service.bytesByLabel('#fresh')).toMatchObject({ bytes: 5 });
    await expectAggregatesExact(database);

    // Past its last value the sequence starts again at 1, where old labels hold the ids; a
    // label holding the last id is stepped over too.
    await database.query(`INSERT INTO labels (id, value) VALUES (2147483647, '#last-id')`);
    await database.query(`SELECT setval('labels_id_seq', 2147483646)`);
    await repository.replaceMinerIndex(2, [row('#after-0')]);
    expect(await service.labelId('#after-0')).toBeLessThan(staleId + 100);
    const fresh = ['#after-1', '#after-2', '#after-3'].map((label) => row(label));
    await repository.replaceMinerIndex(1, fresh);
    const ids = await Promise.all(fresh.map(({ label }) => service.labelId(label!)));
    for (const id of ids) expect(id).toBeLessThan(staleId + 100);
    await expectAggregatesExact(database);
    for (const uid of [1, 2]) await repository.replaceMinerIndex(uid, []);
  });
});

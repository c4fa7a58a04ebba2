import { Clock } from '../../common/clock/clock';
import { HOUR_MS } from '../../common/clock/durations';
import { MinerIndexService } from '../../network/index/miner-index.service';
import { NetworkService } from '../../network/network.service';
import { MAX_DATA_AGE_DAYS } from '../../network/protocol';
import { SourceId } from '../../network/sources';
import { Source } from '../../common/source';
import { QueryBucketQueryDto } from './dto/stats-requests.dto';
import { Conditional } from './stats-conditions';
import { StatsService } from './stats.service';

/** 2026-01-01T10:30Z: inside hour 490_906 since the epoch. */
const NOW = new Date('2026-01-01T10:30:00Z');
const NOW_HOUR = 490_906;

/** The index's reads kept in memory, with a log of the ranges and holders asked for. */
class FakeIndex {
  version = '1';
  labels: { label_value: string; content_size_bytes: string; adj_content_size_bytes: number }[] =
    [];
  hours: { time_bucket_id: number; content_size_bytes: string; adj_content_size_bytes: number }[] =
    [];
  labelBytes = { bytes: 0, adjBytes: 0 };
  labelIds = new Map<string, number>();
  /** (source, label id or undefined) → hours holding data; `askable: false`: only at miners that may not be asked now. */
  held: { source: SourceId; labelId: number | undefined; hour: number; askable?: boolean }[] = [];
  /** How many miners' indexes are loaded (IndexFreshness.loaded). */
  loaded = 1;
  readonly ranges: { from: number; to: number }[] = [];
  readonly lookedUp: string[] = [];

  totalsVersion = () => Promise.resolve(this.version);
  topLabels = () => Promise.resolve(this.labels);
  /** The hours from `oldest` on, as the SQL bounds them. */
  ages = (_source: SourceId, oldest: number) =>
    Promise.resolve(this.hours.filter((row) => row.time_bucket_id >= oldest));
  bytesByLabel = (label: string) => {
    this.lookedUp.push(label);
    return Promise.resolve(this.labelBytes);
  };
  labelId = (label: string) => {
    this.lookedUp.push(label);
    return Promise.resolve(this.labelIds.get(label));
  };
  latestBucket = (
    source: SourceId,
    labelId: number | undefined,
    from: number,
    to: number,
    { askable = true } = {},
  ) => {
    if (askable) this.ranges.push({ from, to });
    const hours = this.held
      .filter((row) => row.source === source && row.labelId === labelId)
      .filter((row) => !askable || row.askable !== false)
      .map((row) => row.hour)
      .filter((hour) => hour >= from && hour <= to);
    return Promise.resolve(hours.length > 0 ? Math.max(...hours) : undefined);
  };
}

/** What the network answers query_bucket's read with. */
type BucketAnswer = Awaited<ReturnType<NetworkService['readBucket']>>;

/** The answer of an unconditional request (a 304 is a failure). */
function answerOf<T>(conditional: Conditional<T>): T {
  if (conditional.status !== 200) throw new Error(`answered ${conditional.status}`);
  return conditional.answer;
}

/** The service's answers to requests without If-None-Match. */
function answersOf(service: StatsService) {
  return {
    topLabels: async (source: Source) => answerOf(await service.topLabels(source)),
    ages: async (source: Source) => answerOf(await service.ages(source)),
    bytesByLabel: async (label: string) => answerOf(await service.bytesByLabel(label)),
    queryBucket: async (source: Source, query: QueryBucketQueryDto) =>
      answerOf(await service.queryBucket(source, query)),
  };
}

function setup(answer?: BucketAnswer, clock: Clock = { now: () => NOW } as Clock) {
  const index = new FakeIndex();
  const network = {
    indexFreshness: () => Promise.resolve({ loaded: index.loaded }),
    readBucket: jest.fn(() =>
      Promise.resolve<BucketAnswer>(
        answer ?? {
          status: 'success',
          cached: false,
          miner: { uid: 4, hotkey: 'hotkey-4' },
          label: '#a',
          claimedBytes: 9,
          fetchedAt: NOW,
          items: [],
        },
      ),
    ),
  };
  const service = new StatsService(
    index as unknown as MinerIndexService,
    network as unknown as NetworkService,
    clock,
  );
  return { index, network, stats: answersOf(service), service };
}

describe(StatsService.name, () => {
  it('answers the adjusted sizes of labels and hours as whole bytes, as the interface types them', async () => {
    const { index, stats } = setup();
    index.labels = [
      { label_value: '#a', content_size_bytes: '1000', adj_content_size_bytes: 612.5 },
      { label_value: '#b', content_size_bytes: '10', adj_content_size_bytes: 3.4999 },
    ];
    index.hours = [
      { time_bucket_id: NOW_HOUR, content_size_bytes: '20', adj_content_size_bytes: 7.5 },
    ];

    expect(await stats.topLabels('x')).toEqual([
      { label_value: '#a', content_size_bytes: 1000, adj_content_size_bytes: 613 },
      { label_value: '#b', content_size_bytes: 10, adj_content_size_bytes: 3 },
    ]);
    expect(await stats.ages('x')).toEqual([
      { time_bucket_id: NOW_HOUR, content_size_bytes: 20, adj_content_size_bytes: 8 },
    ]);
  });

  it('answers the lists again once the totals changed, not from its cache', async () => {
    const { index, stats } = setup();
    index.labels = [{ label_value: '#a', content_size_bytes: '1', adj_content_size_bytes: 1 }];
    index.hours = [
      { time_bucket_id: NOW_HOUR, content_size_bytes: '1', adj_content_size_bytes: 1 },
    ];
    await stats.topLabels('x');
    await stats.ages('x');

    index.labels = [{ label_value: '#a', content_size_bytes: '2', adj_content_size_bytes: 2 }];
    index.hours = [
      { time_bucket_id: NOW_HOUR, content_size_bytes: '2', adj_content_size_bytes: 2 },
    ];
    // Same version: the cached answer stands.
    expect((await stats.topLabels('x'))[0].content_size_bytes).toBe(1);
    index.version = '2';
    expect((await stats.topLabels('x'))[0].content_size_bytes).toBe(2);
    expect((await stats.ages('x'))[0].content_size_bytes).toBe(2);
  });

  // The index sync removes an hour that aged out up to an interval (an hour) later: till then
  // it is still in the totals, and was listed, 721 hours old and more.
  it('lists only the hours of the 30-day window at its clock, a new hour rolling the oldest out without a write of the totals', async () => {
    const clock = new Clock({ startMs: NOW.getTime(), anchorMs: Date.now(), rate: 1 });
    const { index, stats } = setup(undefined, clock);
    const oldest = NOW_HOUR - MAX_DATA_AGE_DAYS * 24;
    index.hours = [oldest + 1, oldest, oldest - 1].map((hour) => ({
      time_bucket_id: hour,
      content_size_bytes: '1',
      adj_content_size_bytes: 1,
    }));
    const listed = async () => (await stats.ages('x')).map((row) => row.time_bucket_id);

    expect(await listed()).toEqual([oldest + 1, oldest]);
    clock.advance(HOUR_MS);
    // Same totals version: the hour that aged out is not answered from the cache.
    expect(await listed()).toEqual([oldest + 1]);
  });

  it('keeps the cached lists of the two sources apart', async () => {
    const { index, stats } = setup();
    index.labels = [{ label_value: '#x', content_size_bytes: '1', adj_content_size_bytes: 1 }];
    await stats.topLabels('x');
    index.labels = [{ label_value: '#r', content_size_bytes: '1', adj_content_size_bytes: 1 }];
    expect((await stats.topLabels('reddit'))[0].label_value).toBe('#r');
  });

  it('looks a label up trimmed and lower-cased, and rounds its adjusted bytes to cents', async () => {
    const { index, stats } = setup();
    index.labelBytes = { bytes: 1234, adjBytes: 617.456 };

    expect(await stats.bytesByLabel(' #BitCoin ')).toEqual({
      label: '#bitcoin',
      total_bytes: 1234,
      adj_total_bytes: 617.46,
    });
    expect(index.lookedUp).toEqual(['#bitcoin']);
  });

  it('reads query_bucket over the 25 hours ending with the last whole hour by default', async () => {
    const { index, stats } = setup();
    await stats.queryBucket('x', {});
    await stats.queryBucket('x', { end_bucket: 100 });
    await stats.queryBucket('x', { end_bucket: 10 });
    await stats.queryBucket('x', { start_bucket: 7, end_bucket: 7 });

    expect(index.ranges).toEqual([
      { from: NOW_HOUR - 25, to: NOW_HOUR - 1 },
      { from: 76, to: 100 },
      // Not before bucket 0.
      { from: 0, to: 10 },
      // One hour is a range.
      { from: 7, to: 7 },
    ]);
  });

  it('answers query_bucket with an error naming the normalized label and the range when nothing is held', async () => {
    const { index, stats } = setup();
    index.labelIds.set('#known', 3);

    expect(
      await stats.queryBucket('x', { label: ' #Unknown ', start_bucket: 1, end_bucket: 2 }),
    ).toEqual({
      status: 'error',
      message: 'No data for label #unknown in buckets 1..2',
    });
    expect(
      await stats.queryBucket('x', { label: '#KNOWN', start_bucket: 1, end_bucket: 2 }),
    ).toEqual({
      status: 'error',
      message: 'No data for #known in buckets 1..2',
    });
    expect(await stats.queryBucket('x', { start_bucket: 1, end_bucket: 2 })).toEqual({
      status: 'error',
      message: 'No data for any label in buckets 1..2',
    });
  });

  it("quotes the label's control and format characters as escapes in query_bucket's error", async () => {
    const { index, stats } = setup();
    index.labelIds.set('#\u202eknown\u001b', 3);

    expect(
      await stats.queryBucket('x', {
        label: '#\u202eAbc\u001b[31m',
        start_bucket: 1,
        end_bucket: 2,
      }),
    ).toEqual({
      status: 'error',
      message: 'No data for label #\\u202eabc\\u001b[31m in buckets 1..2',
    });
    expect(
      await stats.queryBucket('x', { label: '#\u202eKNOWN\u001b', start_bucket: 1, end_bucket: 2 }),
    ).toEqual({
      status: 'error',
      message: 'No data for #\\u202eknown\\u001b in buckets 1..2',
    });
  });

  it('answers query_bucket with the newest held bucket of the source and label, and what the miner sent', async () => {
    const { index, network, stats } = setup();
    index.labelIds.set('#a', 7);
    index.held = [
      { source: 2, labelId: 7, hour: 95 },
      { source: 2, labelId: 7, hour: 98 },
      { source: 1, labelId: 7, hour: 99 },
      { source: 2, labelId: undefined, hour: 100 },
    ];

    expect(await stats.queryBucket('x', { label: '#A', end_bucket: 100 })).toEqual({
      status: 'success',
      cached: false,
      fetched_at: NOW.toISOString(),
      miner: { uid: 4, hotkey: 'hotkey-4' },
      bucket: {
        id: 98,
        start: '1970-01-05T02:00:00.000Z',
        end: '1970-01-05T03:00:00.000Z',
        source: 'X',
        label: '#a',
        expected_size: 9,
      },
      data: [],
    });
    // The network reads the bucket of that label from its holders.
    expect(network.readBucket).toHaveBeenCalledWith(2, 98, 7);
  });

  // Held only by miners that may not be asked now (failing, …): "No data" was untrue while the
  // statistics counted its bytes (an error texts audit's finding). The network answers from an
  // earlier fetch, or says why no holder can be asked.
  it('reads an hour held only by miners that may not be asked now', async () => {
    const { index, network, stats } = setup();
    index.held = [{ source: 2, labelId: undefined, hour: 99, askable: false }];
    expect(await stats.queryBucket('x', { end_bucket: 100 })).toMatchObject({ status: 'success' });
    expect(network.readBucket).toHaveBeenCalledWith(2, 99, undefined);
  });

  it('says which buckets hold data is not known while no index is loaded', async () => {
    const { index, stats } = setup();
    index.loaded = 0;
    expect(await stats.queryBucket('x', { start_bucket: 1, end_bucket: 2 })).toEqual({
      status: 'error',
      message:
        "Which buckets hold data for any label in buckets 1..2 is not known: the miners' data index is not loaded yet (no miner's index is loaded); ask again after the next index sync",
    });
    // No label is known either then.
    expect(
      await stats.queryBucket('x', { label: '#ai', start_bucket: 1, end_bucket: 2 }),
    ).toMatchObject({
      message: expect.stringMatching(
        /^Which buckets hold data for label #ai in buckets 1\.\.2 is not known/,
      ),
    });
  });

  it("passes on the network's error when no holder answered", async () => {
    const { index, stats } = setup({ status: 'error', message: 'No miner answered' });
    index.held = [{ source: 2, labelId: undefined, hour: 100 }];

    expect(await stats.queryBucket('x', { end_bucket: 100 })).toEqual({
      status: 'error',
      message: 'No miner answered',
    });
  });
});

describe(`${StatsService.name}'s conditional answers`, () => {
  it('tags an answer by the aggregates’ version and the normalized request, the same on every instance', async () => {
    const { index, service } = setup();
    const other = setup().service;
    const tag = async (answer: Promise<Conditional<unknown>>) => (await answer).tag;

    expect(await tag(service.topLabels('x'))).toBe(await tag(other.topLabels('x')));
    expect(await tag(service.bytesByLabel(' #BTC '))).toBe(await tag(other.bytesByLabel('#btc')));
    const tags = [
      await tag(service.topLabels('x')),
      await tag(service.topLabels('reddit')),
      await tag(service.ages('x')),
      await tag(service.ages('reddit')),
      await tag(service.bytesByLabel('#btc')),
      await tag(service.bytesByLabel('#eth')),
    ];
    index.version = '2';
    tags.push(
      await tag(service.topLabels('x')),
      await tag(service.ages('x')),
      await tag(service.bytesByLabel('#btc')),
    );
    expect(new Set(tags).size).toBe(tags.length);
    for (const each of tags) expect(each).toMatch(/^W\/"[0-9a-f]{32}"$/);
  });

  it('retags ages when its window moves on, without a write of the totals', async () => {
    const clock = new Clock({ startMs: NOW.getTime(), anchorMs: Date.now(), rate: 1 });
    const { service } = setup(undefined, clock);
    const before = (await service.ages('x')).tag;
    clock.advance(HOUR_MS);
    expect((await service.ages('x')).tag).not.toBe(before);
  });

  it('answers 304 without reading the totals when If-None-Match names the tag', async () => {
    const { index, service } = setup();
    const { tag } = await service.bytesByLabel('#btc');
    index.lookedUp.length = 0;

    expect(await service.bytesByLabel('#BTC', `"other", ${tag}`)).toEqual({ status: 304, tag });
    expect(await service.bytesByLabel('#btc', tag.slice(2))).toEqual({ status: 304, tag });
    expect(await service.bytesByLabel('#btc', '*')).toEqual({ status: 304, tag });
    expect(index.lookedUp).toEqual([]);
    expect((await service.bytesByLabel('#btc', 'W/"other"')).status).toBe(200);
    index.version = '2';
    expect((await service.bytesByLabel('#btc', tag)).status).toBe(200);
  });

  it("tags query_bucket by its answer, which the network decides, not the totals' version", async () => {
    const answers: BucketAnswer[] = [
      { status: 'error', message: 'No miner may be asked' },
      { status: 'error', message: 'No miner may be asked' },
      { status: 'error', message: 'No miner answered' },
    ];
    const index = new FakeIndex();
    const network = { readBucket: () => Promise.resolve(answers.shift()) };
    const clock = { now: () => NOW } as Clock;
    const service = new StatsService(
      index as unknown as MinerIndexService,
      network as unknown as NetworkService,
      clock,
    );
    index.held = [{ source: 2, labelId: undefined, hour: 100 }];

    const first = await service.queryBucket('x', { end_bucket: 100 });
    expect(await service.queryBucket('x', { end_bucket: 100 }, first.tag)).toEqual({
      status: 304,
      tag: first.tag,
    });
    const changed = await service.queryBucket('x', { end_bucket: 100 }, first.tag);
    expect(changed).toMatchObject({ status: 200, answer: { message: 'No miner answered' } });
    expect(changed.tag).not.toBe(first.tag);
  });
});

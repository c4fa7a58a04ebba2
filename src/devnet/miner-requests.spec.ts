import { parseMinerRequest } from './miner-requests';

/**
 * The synapses' inputs at their bounds, as subnet 13's pydantic models hold them
 * (common/protocol.py, common/data.py; wire spec §2). A devnet looser than a miner would let a
 * gateway that sends what miners refuse pass its tests.
 */

const onDemand = (fields: Record<string, unknown>) =>
  parseMinerRequest('OnDemandRequest', { source: 2, ...fields });
const bucketId = (fields: Record<string, unknown> = {}) => ({
  time_bucket: { id: 480_000 },
  source: 2,
  label: { value: '#bitcoin' },
  ...fields,
});
const names = (count: number) => Array.from({ length: count }, (_, index) => `name${index}`);

describe('OnDemandRequest', () => {
  it('takes at most 10 usernames and 5 keywords', () => {
    expect(onDemand({ usernames: names(10), keywords: names(5) })).toMatchObject({ ok: true });
    expect(onDemand({ usernames: names(11) })).toMatchObject({ ok: false });
    expect(onDemand({ keywords: names(6) })).toMatchObject({ ok: false });
  });

  it('takes a limit from 1 to 1000, 100 when absent', () => {
    for (const limit of [1, 1000])
      expect(onDemand({ limit })).toMatchObject({ ok: true, value: { query: { limit } } });
    for (const limit of [0, 1001, 2.5, '10'])
      expect(onDemand({ limit })).toMatchObject({ ok: false });
    expect(onDemand({})).toMatchObject({ ok: true, value: { query: { limit: 100 } } });
  });

  it('reads an absent keyword_mode as "all", the model default', () => {
    expect(onDemand({ keywords: ['a', 'b'] })).toMatchObject({
      ok: true,
      value: { query: { keyword_mode: 'all' } },
    });
  });

  it('refuses a url or a date that is not a string', () => {
    expect(onDemand({ url: 5 })).toMatchObject({ ok: false });
    expect(onDemand({ end_date: 20260101 })).toMatchObject({ ok: false });
    expect(onDemand({ url: 'https://x.com/a/status/1', end_date: null })).toMatchObject({
      ok: true,
      value: { query: { url: 'https://x.com/a/status/1', end_date: null } },
    });
  });

  // The model takes any string; handle_on_demand reads it with Python 3.10's fromisoformat.
  it('reads the dates as Python 3.10 does, and one it cannot read as no query', () => {
    expect(
      onDemand({ start_date: '2026-01-01T00:00:00+00:00', end_date: '2026-01-02' }),
    ).toMatchObject({
      ok: true,
      value: {
        query: {
          start_date: new Date('2026-01-01T00:00:00Z'),
          end_date: new Date('2026-01-02T00:00:00Z'),
        },
      },
    });
    for (const date of ['2026-01-01T00:00:00Z', '2026-01-01T00:00:00.000Z', 'tomorrow'])
      expect(onDemand({ end_date: date })).toEqual({
        ok: true,
        value: { synapse: 'OnDemandRequest', query: null },
      });
  });
});

describe('GetMinerIndex', () => {
  it('passes an absent version on as null (the miner then fails), never as 4', () => {
    expect(parseMinerRequest('GetMinerIndex', {})).toEqual({
      ok: true,
      value: { synapse: 'GetMinerIndex', version: null },
    });
    expect(parseMinerRequest('GetMinerIndex', { version: 4.5 })).toMatchObject({ ok: false });
  });
});

describe('bucket ids', () => {
  it('takes time bucket 1, and refuses 0: TimeBucket.id is a PositiveInt', () => {
    const asked = (id: number) =>
      parseMinerRequest('GetDataEntityBucket', {
        data_entity_bucket_id: bucketId({ time_bucket: { id } }),
      });
    expect(asked(1)).toMatchObject({ ok: true, value: { bucket: { timeBucket: 1 } } });
    expect(asked(0)).toMatchObject({ ok: false });
  });

  it('lower-cases the label, as DataLabel does, and refuses one that is not a string', () => {
    const asked = (label: unknown) =>
      parseMinerRequest('GetDataEntityBucket', { data_entity_bucket_id: bucketId({ label }) });
    expect(asked({ value: '#BitCoin' })).toMatchObject({
      value: { bucket: { label: '#bitcoin' } },
    });
    expect(asked({ value: 7 })).toMatchObject({ ok: false });
    expect(asked(null)).toMatchObject({ ok: true, value: { bucket: { label: null } } });
  });

  it('refuses a source outside DataSource (1 to 7)', () => {
    const asked = parseMinerRequest('GetDataEntityBucket', {
      data_entity_bucket_id: bucketId({ source: 9 }),
    });
    expect(asked).toMatchObject({ ok: false });
  });

  it('answers nothing to more than 100 ids in GetContentsByBuckets, and all of 100', () => {
    const ids = (count: number) =>
      parseMinerRequest('GetContentsByBuckets', {
        data_entity_bucket_ids: Array.from({ length: count }, () => bucketId()),
      });
    expect(ids(100)).toMatchObject({ ok: true });
    expect((ids(100) as { value: { buckets: unknown[] } }).value.buckets).toHaveLength(100);
    expect(ids(101)).toMatchObject({ ok: true, value: { buckets: [] } });
  });

  it('refuses the whole GetContentsByBuckets call when one of its ids is malformed', () => {
    const asked = parseMinerRequest('GetContentsByBuckets', {
      data_entity_bucket_ids: [bucketId(), bucketId({ time_bucket: 480_000 })],
    });
    expect(asked).toMatchObject({ ok: false });
    expect(
      parseMinerRequest('GetContentsByBuckets', { data_entity_bucket_ids: 'all' }),
    ).toMatchObject({ ok: false });
  });
});

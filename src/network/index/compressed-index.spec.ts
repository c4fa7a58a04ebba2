import { MAX_BUCKET_BYTES, MAX_INDEX_BUCKETS, timeBucketId } from '../protocol';
import { InvalidIndexError, parseCompressedIndex } from './compressed-index';

const now = new Date('2026-11-21T12:30:00Z');
const hour = timeBucketId(now);

describe(parseCompressedIndex.name, () => {
  it('flattens both sources, normalizing labels and keeping the first of entries that collide', () => {
    const rows = parseCompressedIndex(
      {
        sources: {
          '1': [{ label: ' R/Bitcoin ', time_bucket_ids: [hour - 1, hour], sizes_bytes: [10, 20] }],
          '2': [
            { label: '#AI', time_bucket_ids: [hour], sizes_bytes: [5] },
            { label: '#ai', time_bucket_ids: [hour], sizes_bytes: [7] },
            // The same hour twice in one entry: the first size stands too.
            { label: '#eth', time_bucket_ids: [hour, hour, hour], sizes_bytes: [9, 50, 50] },
            { label: null, time_bucket_ids: [hour - 2], sizes_bytes: [3] },
          ],
        },
      },
      now,
    );
    expect(rows).toEqual(
      expect.arrayContaining([
        { source: 1, label: 'r/bitcoin', timeBucket: hour - 1, bytes: 10 },
        { source: 1, label: 'r/bitcoin', timeBucket: hour, bytes: 20 },
        { source: 2, label: '#ai', timeBucket: hour, bytes: 5 },
        { source: 2, label: '#eth', timeBucket: hour, bytes: 9 },
        { source: 2, label: null, timeBucket: hour - 2, bytes: 3 },
      ]),
    );
    expect(rows).toHaveLength(5);
  });

  it('skips buckets older than the 30-day retention and empty ones', () => {
    const rows = parseCompressedIndex(
      {
        sources: {
          '2': [
            {
              label: '#a',
              time_bucket_ids: [hour - 30 * 24 - 1, hour, hour - 1],
              sizes_bytes: [9, 0, 4],
            },
          ],
        },
      },
      now,
    );
    expect(rows).toEqual([{ source: 2, label: '#a', timeBucket: hour - 1, bytes: 4 }]);
  });

  it.each([
    ['not an object', 'nope'],
    ['no sources', {}],
    ['a source key that is not a number', { sources: { youtube: [] } }],
    ['an unserved source whose entries are not a list', { sources: { '3': {} } }],
    [
      'an unserved source without bucket lists',
      { sources: { '3': [{ label: 'x', sizes_bytes: [1] }] } },
    ],
    ['entries that are not a list', { sources: { '1': {} } }],
    [
      'mismatched lists',
      { sources: { '1': [{ label: 'r/a', time_bucket_ids: [hour], sizes_bytes: [] }] } },
    ],
    [
      'string bucket ids',
      { sources: { '1': [{ label: 'r/a', time_bucket_ids: [String(hour)], sizes_bytes: [1] }] } },
    ],
    [
      'negative sizes',
      { sources: { '1': [{ label: 'r/a', time_bucket_ids: [hour], sizes_bytes: [-1] }] } },
    ],
    [
      'a non-string label',
      { sources: { '1': [{ label: 42, time_bucket_ids: [hour], sizes_bytes: [1] }] } },
    ],
    [
      'a label over 140 characters',
      {
        sources: {
          '2': [{ label: `#${'a'.repeat(140)}`, time_bucket_ids: [hour], sizes_bytes: [1] }],
        },
      },
    ],
    [
      'a bucket claimed over the subnet’s 128 MiB cap',
      {
        sources: {
          '2': [{ label: '#tao', time_bucket_ids: [hour, hour - 1], sizes_bytes: [500, 1e12] }],
        },
      },
    ],
    [
      'an over-cap bucket in an hour it would skip',
      {
        sources: {
          '2': [{ label: '#tao', time_bucket_ids: [hour - 31 * 24], sizes_bytes: [1e12] }],
        },
      },
    ],
    [
      'an over-cap bucket in a source it does not serve',
      {
        sources: {
          '2': [{ label: '#tao', time_bucket_ids: [hour], sizes_bytes: [500] }],
          '3': [
            { label: '#ytc_c_x', time_bucket_ids: [hour], sizes_bytes: [MAX_BUCKET_BYTES + 1] },
          ],
        },
      },
    ],
  ])('rejects an index with %s', (_case, index) => {
    expect(() => parseCompressedIndex(index, now)).toThrow(InvalidIndexError);
  });

  // Quoted in a logged warning: a key of a line break, ESC and U+202E forged log lines, and
  // one of 5,000 characters filled one (a review's finding).
  it("quotes the miner's source key escaped and cut", () => {
    const key = `x\n[Nest] ERROR FORGED\u001b[31m\u202e${'A'.repeat(5000)}`;
    expect(() => parseCompressedIndex({ sources: { [key]: [] } }, now)).toThrow(
      new InvalidIndexError('source id x\\u000a[Nest] ERROR FORGE… is not a number'),
    );
    const digits = '1'.repeat(5000);
    expect(() => parseCompressedIndex({ sources: { [digits]: {} } }, now)).toThrow(
      new InvalidIndexError(`sources.${'1'.repeat(20)}… is not a list`),
    );
  });

  it('keeps a bucket at the cap, and caps entries that sum over it after normalization', () => {
    const rows = parseCompressedIndex(
      {
        sources: {
          '2': [
            { label: '#AI', time_bucket_ids: [hour], sizes_bytes: [MAX_BUCKET_BYTES] },
            { label: '#ai', time_bucket_ids: [hour], sizes_bytes: [7] },
          ],
        },
      },
      now,
    );
    expect(rows).toEqual([{ source: 2, label: '#ai', timeBucket: hour, bytes: MAX_BUCKET_BYTES }]);
  });

  it('counts a label’s length in code points: 81 astral characters are not over 140', () => {
    const label = `#${'\u{1D41B}'.repeat(80)}`;
    const rows = parseCompressedIndex(
      { sources: { '2': [{ label, time_bucket_ids: [hour], sizes_bytes: [9] }] } },
      now,
    );
    expect(rows).toEqual([{ source: 2, label, timeBucket: hour, bytes: 9 }]);
  });

  it('keeps a label of exactly 140 characters and rejects the index for one of 141', () => {
    const index = (label: string) => ({
      sources: { '2': [{ label, time_bucket_ids: [hour], sizes_bytes: [9] }] },
    });
    const longest = `#${'a'.repeat(139)}`;
    expect(parseCompressedIndex(index(longest), now)).toEqual([
      { source: 2, label: longest, timeBucket: hour, bytes: 9 },
    ]);
    expect(() => parseCompressedIndex(index(`${longest}a`), now)).toThrow(InvalidIndexError);
  });

  it('files an entry whose label is empty once trimmed as data without a label', () => {
    const rows = parseCompressedIndex(
      {
        sources: {
          '2': [
            { label: '  ', time_bucket_ids: [hour], sizes_bytes: [3] },
            { label: null, time_bucket_ids: [hour], sizes_bytes: [4] },
          ],
        },
      },
      now,
    );
    // Filed as the null label's, the hour listed first keeps its size.
    expect(rows).toEqual([{ source: 2, label: null, timeBucket: hour, bytes: 3 }]);
  });

  it('ignores sources the gateway does not serve (YouTube is 3, 4 to 7 are reserved)', () => {
    const entry = (label: string) => ({ label, time_bucket_ids: [hour], sizes_bytes: [9] });
    const rows = parseCompressedIndex(
      {
        sources: {
          '2': [entry('#tao')],
          '3': [
            entry('#ytc_c_UCabcDEF'),
            { label: null, time_bucket_ids: [hour], sizes_bytes: [] },
          ],
          '7': [entry('anything')],
        },
      },
      now,
    );
    expect(rows).toEqual([{ source: 2, label: '#tao', timeBucket: hour, bytes: 9 }]);
  });

  it('counts the buckets of unserved sources toward the cap', () => {
    const ids = Array.from({ length: MAX_INDEX_BUCKETS }, () => hour);
    const youtube = { label: '#ytc_v_x', time_bucket_ids: ids, sizes_bytes: ids.map(() => 1) };
    const reddit = { label: 'r/a', time_bucket_ids: [hour], sizes_bytes: [1] };
    expect(() => parseCompressedIndex({ sources: { '1': [reddit], '3': [youtube] } }, now)).toThrow(
      /more than 350000 buckets/,
    );
  });

  it('keeps the oldest hour of the retention and the next hour, and nothing beyond either', () => {
    const oldest = hour - 30 * 24;
    const rows = parseCompressedIndex(
      {
        sources: {
          '2': [
            {
              label: '#a',
              time_bucket_ids: [oldest - 1, oldest, hour + 1, hour + 2],
              sizes_bytes: [1, 2, 3, 4],
            },
          ],
        },
      },
      now,
    );
    expect(rows.map((row) => [row.timeBucket, row.bytes])).toEqual([
      [oldest, 2],
      [hour + 1, 3],
    ]);
  });

  it('skips a bucket later than the next hour and keeps the rest of the index', () => {
    const rows = parseCompressedIndex(
      {
        sources: {
          '2': [
            { label: '#a', time_bucket_ids: [hour + 5, hour + 1, hour], sizes_bytes: [1, 2, 3] },
          ],
        },
      },
      now,
    );
    expect(rows).toEqual([
      { source: 2, label: '#a', timeBucket: hour + 1, bytes: 2 },
      { source: 2, label: '#a', timeBucket: hour, bytes: 3 },
    ]);
  });

  it(`rejects an index claiming more than ${MAX_INDEX_BUCKETS} buckets`, () => {
    const ids = Array.from({ length: MAX_INDEX_BUCKETS / 2 + 1 }, () => hour);
    const entry = { label: '#a', time_bucket_ids: ids, sizes_bytes: ids.map(() => 1) };
    expect(() =>
      parseCompressedIndex({ sources: { '1': [{ ...entry, label: 'r/a' }], '2': [entry] } }, now),
    ).toThrow(/more than 350000 buckets/);
  });

  it(`rejects an index of more than ${MAX_INDEX_BUCKETS} entries, empty ones included`, () => {
    const entries = Array.from({ length: MAX_INDEX_BUCKETS / 2 + 1 }, (_, i) => ({
      label: `#l${i}`,
      time_bucket_ids: [],
      sizes_bytes: [],
    }));
    expect(() => parseCompressedIndex({ sources: { '1': entries, '2': entries } }, now)).toThrow(
      /more than 350000 entries/,
    );
    expect(parseCompressedIndex({ sources: { '2': entries } }, now)).toEqual([]);
  });

  it('leaves out entries whose label Postgres cannot store (U+0000, unpaired surrogates), and keeps the rest', () => {
    const entry = (label: string, bytes: number) => ({
      label,
      time_bucket_ids: [hour],
      sizes_bytes: [bytes],
    });
    const rows = parseCompressedIndex(
      {
        sources: {
          '2': [entry('#a\u0000', 1), entry('#a', 2), entry('#\ud83d', 4), entry('#😀', 8)],
          '1': [entry('r/b\udc00x', 16)],
        },
      },
      now,
    );
    // Not merged into #a: the miner holds #a\u0000 as a bucket of its own.
    expect(rows).toEqual([
      { source: 2, label: '#a', timeBucket: hour, bytes: 2 },
      { source: 2, label: '#😀', timeBucket: hour, bytes: 8 },
    ]);
  });

  it('checks an entry left out for its label as any other: a malformed one rejects the index', () => {
    const unstorable = '#b\u0000';
    const parse = (entry: Record<string, unknown>) => () =>
      parseCompressedIndex({ sources: { '2': [{ label: unstorable, ...entry }] } }, now);
    expect(parse({ time_bucket_ids: [hour], sizes_bytes: [] })).toThrow(/equal length/);
    expect(parse({ time_bucket_ids: [hour], sizes_bytes: [-1] })).toThrow(/non-negative size/);
    expect(() =>
      parseCompressedIndex(
        {
          sources: {
            '2': [
              { label: `#${'x'.repeat(200)}\u0000`, time_bucket_ids: [hour], sizes_bytes: [1] },
            ],
          },
        },
        now,
      ),
    ).toThrow(/longer than/);
  });

  it('counts the buckets of entries left out for their label toward the cap', () => {
    const ids = Array.from({ length: MAX_INDEX_BUCKETS / 2 + 1 }, () => hour);
    const entry = (label: string) => ({
      label,
      time_bucket_ids: ids,
      sizes_bytes: ids.map(() => 1),
    });
    expect(() =>
      parseCompressedIndex({ sources: { '2': [entry('#a'), entry('#b\u0000')] } }, now),
    ).toThrow(/more than 350000 buckets/);
  });
});

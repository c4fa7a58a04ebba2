import {
  getContentsByBucketsFields,
  onDemandRequestFields,
  readBucketContents,
  readCompressedIndex,
  WrongAnswerError,
} from './messages';
import { MAX_INDEX_VALUES } from './miner-json';

describe(onDemandRequestFields.name, () => {
  const query = {
    source: 'reddit' as const,
    usernames: ['hodl_forever'],
    keywords: ['halving', '/r/Bitcoin'],
    keywordMode: 'any' as const,
    startDate: null,
    endDate: new Date('2026-11-20T12:00:00Z'),
    limit: 50,
  };

  it('sends the keyword mode asked for, and subreddit selectors first as r/name', () => {
    expect(onDemandRequestFields(query)).toEqual({
      version: 4,
      source: 1,
      usernames: ['hodl_forever'],
      keywords: ['r/bitcoin', 'halving'],
      keyword_mode: 'any',
      url: null,
      start_date: null,
      end_date: '2026-11-20T12:00:00+00:00',
      limit: 50,
    });
    expect(onDemandRequestFields({ ...query, keywordMode: 'all' }).keyword_mode).toBe('all');
  });

  // A miner matches the record's author exactly: `"@elonmusk "` would ask for nobody.
  it('sends usernames trimmed and without @, keywords trimmed, and leaves blank ones out', () => {
    const fields = onDemandRequestFields({
      ...query,
      source: 'x',
      usernames: ['@elonmusk ', ' NASA', '@', '  '],
      keywords: [' halving ', '#btc', ' '],
    });
    expect(fields.usernames).toEqual(['elonmusk', 'NASA']);
    expect(fields.keywords).toEqual(['halving', '#btc']);
    expect(
      onDemandRequestFields({
        ...query,
        usernames: [' @hodl_forever'],
        keywords: [' /r/Bitcoin '],
      }),
    ).toMatchObject({ usernames: ['hodl_forever'], keywords: ['r/bitcoin'] });
  });

  // Miners read them with datetime.fromisoformat, which refuses a `Z` before Python 3.11 and
  // reads every form datetime.isoformat() writes: `+00:00`, microseconds only when not zero.
  it('writes dates as Python writes them, which every Python miner can read', () => {
    const fields = onDemandRequestFields({
      ...query,
      startDate: new Date('2026-11-19T08:30:15.250Z'),
      endDate: new Date('2026-11-20T12:00:00.000Z'),
    });
    expect(fields.start_date).toBe('2026-11-19T08:30:15.250000+00:00');
    expect(fields.end_date).toBe('2026-11-20T12:00:00+00:00');
  });
});

describe('GetContentsByBuckets messages', () => {
  const bucket = { source: 2 as const, label: '#tao', timeBucket: 490_000 };

  it('asks for buckets by their wire ids, at most 100', () => {
    expect(getContentsByBucketsFields([bucket])).toEqual({
      version: 4,
      data_entity_bucket_ids: [
        { time_bucket: { id: 490_000 }, source: 2, label: { value: '#tao' } },
      ],
    });
    expect(
      getContentsByBucketsFields(Array.from({ length: 100 }, () => bucket)).data_entity_bucket_ids,
    ).toHaveLength(100);
    expect(() => getContentsByBucketsFields(Array.from({ length: 101 }, () => bucket))).toThrow(
      RangeError,
    );
  });

  it('reads the answer as (bucket id, contents) pairs and refuses any other shape', () => {
    const id = { time_bucket: { id: 1 }, source: 2, label: null };
    expect(readBucketContents({ bucket_ids_to_contents: [[id, ['{}']]] })).toEqual([
      { bucketId: id, contents: ['{}'] },
    ]);
    for (const body of [
      {},
      { bucket_ids_to_contents: {} },
      { bucket_ids_to_contents: [[id]] },
      { bucket_ids_to_contents: [[id, ['{}'], 'extra']] },
    ])
      expect(() => readBucketContents(body)).toThrow(WrongAnswerError);
  });
});

describe(readCompressedIndex.name, () => {
  it('parses the index the answer holds as a JSON string', () => {
    const index = { sources: { '2': [{ label: '#tao', time_bucket_ids: [1], sizes_bytes: [9] }] } };
    expect(readCompressedIndex({ compressed_index_serialized: JSON.stringify(index) })).toEqual(
      index,
    );
  });

  // JSON.parse would read a number or null as itself: only a string holding JSON is an index.
  it.each([
    ['missing', {}],
    ['a number', { compressed_index_serialized: 42 }],
    ['null', { compressed_index_serialized: null }],
    ['the index unserialized', { compressed_index_serialized: { sources: {} } }],
    ['a string that is not JSON', { compressed_index_serialized: '{"sources":' }],
    [
      'padded past its bound of values',
      { compressed_index_serialized: `{"sources":{},"pad":[${'[],'.repeat(MAX_INDEX_VALUES)}[]]}` },
    ],
  ])('refuses an index that is %s as a wrong answer', (_, body) => {
    expect(() => readCompressedIndex(body)).toThrow(WrongAnswerError);
  });
});

import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expectedRows, readParquet } from '../../../test/support/parquet-reader';
import { DataItem, RedditItem, XItem } from '../../network/protocol';
import { parquetPathBeside, writeParquet } from './dataset-parquet';
import { writeJsonLines } from './dataset-writer';

const FULL_X: XItem = {
  uri: 'https://x.com/alice/status/1900000000000000001',
  datetime: '2026-11-01T10:20:30.456Z',
  source: 'X',
  label: '#bitcoin',
  // Line breaks, quotes, U+2028 and astral characters survive both formats.
  content: 'Line one\nline "two"\r\n\u2028 🚀 #Bitcoin #ai',
  user: {
    username: 'alice',
    display_name: 'Alice Ω',
    id: '123456789012345678',
    verified: true,
    followers_count: 3_000_000_000,
    following_count: 12,
  },
  tweet: {
    id: '1900000000000000001',
    like_count: 5,
    retweet_count: 0,
    reply_count: 1,
    quote_count: 2,
    hashtags: ['#Bitcoin', '#ai'],
    is_retweet: false,
    is_reply: true,
    is_quote: false,
    conversation_id: '1899999999999999999',
  },
  media: [
    { url: 'https://pbs.twimg.com/media/a.jpg', type: 'photo' },
    { url: 'https://video.twimg.com/ext_tw_video/b.mp4', type: 'video' },
  ],
};

const SPARSE_X: XItem = {
  ...FULL_X,
  uri: 'https://x.com/bob/status/1900000000000000002',
  datetime: '2026-11-01T11:00:00.000Z',
  label: null,
  content: '',
  user: {
    username: 'bob',
    display_name: null,
    id: null,
    verified: null,
    followers_count: null,
    following_count: null,
  },
  tweet: {
    id: '1900000000000000002',
    like_count: null,
    retweet_count: null,
    reply_count: null,
    quote_count: null,
    hashtags: [],
    is_retweet: null,
    is_reply: null,
    is_quote: null,
    conversation_id: null,
  },
  media: [],
};

const POST: RedditItem = {
  uri: 'https://www.reddit.com/r/Bitcoin/comments/abc/title/',
  datetime: '2026-11-01T09:00:00.000Z',
  source: 'REDDIT',
  label: 'r/bitcoin',
  content: 'A title\n\nA body',
  id: 't3_abc',
  url: 'https://www.reddit.com/r/Bitcoin/comments/abc/title/',
  username: 'carol',
  communityName: 'r/Bitcoin',
  body: 'A body',
  title: 'A title',
  createdAt: '2026-11-01T09:00:00.000Z',
  dataType: 'post',
  parentId: null,
};

const COMMENT: RedditItem = {
  uri: 'https://www.reddit.com/r/Bitcoin/comments/abc/title/def/',
  datetime: '2026-11-01T09:05:00.000Z',
  source: 'REDDIT',
  label: 'r/bitcoin',
  content: 'A reply',
  id: 't1_def',
  url: 'https://www.reddit.com/r/Bitcoin/comments/abc/title/def/',
  username: 'dave',
  communityName: 'r/Bitcoin',
  body: 'A reply',
  title: null,
  createdAt: '2026-11-01T09:05:00.000Z',
  dataType: 'comment',
  parentId: 't3_abc',
};

describe('writeParquet', () => {
  let directory: string;
  beforeEach(() => (directory = mkdtempSync(join(tmpdir(), 'dataset-parquet-'))));
  afterEach(() => rmSync(directory, { recursive: true, force: true }));

  async function jsonLines(name: string, items: DataItem[]): Promise<string> {
    async function* rows() {
      for (const item of items) yield { uri: item.uri, datetime: new Date(item.datetime), item };
    }
    return (await writeJsonLines(join(directory, `${name}.jsonl.gz`), rows())).file;
  }

  it('writes X items as flat typed columns with lists and timestamps, value for value', async () => {
    const source = await jsonLines('x', [FULL_X, SPARSE_X]);
    const written = await writeParquet('x', source, parquetPathBeside(source));
    expect(written.rows).toBe(2);
    const { columns, rows } = await readParquet(join(directory, 'x.parquet'));
    expect(columns).toMatchObject({
      uri: 'VARCHAR',
      datetime: 'TIMESTAMP',
      label: 'VARCHAR',
      user_verified: 'BOOLEAN',
      user_followers_count: 'BIGINT',
      tweet_id: 'VARCHAR',
      tweet_hashtags: 'VARCHAR[]',
      media: 'STRUCT(url VARCHAR, "type" VARCHAR)[]',
    });
    expect(rows).toEqual(expectedRows([FULL_X, SPARSE_X], columns));
  });

  it('writes Reddit posts and comments, the field a kind lacks as null', async () => {
    const source = await jsonLines('r', [POST, COMMENT]);
    await writeParquet('reddit', source, parquetPathBeside(source));
    const { columns, rows } = await readParquet(join(directory, 'r.parquet'));
    expect(columns).toMatchObject({
      datetime: 'TIMESTAMP',
      createdAt: 'TIMESTAMP',
      communityName: 'VARCHAR',
      title: 'VARCHAR',
      parentId: 'VARCHAR',
    });
    expect(rows).toEqual(expectedRows([POST, COMMENT], columns));
    expect(rows.map((row) => [row.title, row.parentId])).toEqual([
      ['A title', null],
      [null, 't3_abc'],
    ]);
  });

  it('hashes the bytes it wrote, and writes the same bytes every time', async () => {
    const source = await jsonLines('x', [FULL_X, SPARSE_X]);
    const first = await writeParquet('x', source, join(directory, 'a.parquet'));
    const second = await writeParquet('x', source, join(directory, 'b.parquet'));
    const bytes = readFileSync(join(directory, 'a.parquet'));
    expect(first.sha256).toBe(createHash('sha256').update(bytes).digest('hex'));
    expect(first.bytes).toBe(bytes.length);
    expect(second.sha256).toBe(first.sha256);
  });

  it('writes an empty dataset as a file with the columns and no rows', async () => {
    const source = await jsonLines('empty', []);
    await writeParquet('reddit', source, parquetPathBeside(source));
    const { columns, rows } = await readParquet(join(directory, 'empty.parquet'));
    expect(Object.keys(columns)).toContain('communityName');
    expect(rows).toEqual([]);
  });

  it('refuses an item of the other platform and leaves no file behind', async () => {
    const source = await jsonLines('mixed', [FULL_X, POST]);
    await expect(writeParquet('x', source, parquetPathBeside(source))).rejects.toThrow(
      'row 2 is a REDDIT item in a X dataset',
    );
    expect(readdirSync(directory)).toEqual(['mixed.jsonl.gz']);
  });

  it('fails, leaving no file, when the JSON lines file is missing', async () => {
    await expect(
      writeParquet('x', join(directory, 'gone.jsonl.gz'), join(directory, 'gone.parquet')),
    ).rejects.toThrow(/ENOENT/);
    expect(readdirSync(directory)).toEqual([]);
  });
});

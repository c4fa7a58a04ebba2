import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Writable } from 'node:stream';
import { Worker } from 'node:worker_threads';
import {
  expectedRows,
  queryParquet,
  readParquet,
  readParquetMetadata,
} from '../../../test/support/parquet-reader';
import { redditComment } from '../../../test/support/items';
import { currentItemShape, StoredItemShape } from '../../network/legacy-items';
import { RedditItem, XItem } from '../../network/protocol';
import { WriteStopped } from './atomic-file';
import {
  hasCurrentParquet,
  PARQUET_VERSION,
  parquetMetadata,
  parquetPathBeside,
  ROW_GROUP_CHARS,
  writeParquet,
} from './dataset-parquet';
import { writeJsonLines } from './dataset-writer';
import { convertInWorker } from './parquet-conversion';
import { TaskRow } from './task.types';

const TEXT = 'Line one\nline "two"\r\n\u2028 🚀 #Bitcoin #ai';

const FULL_X: XItem = {
  // Line breaks, quotes, U+2028 and astral characters survive both formats.
  text: TEXT,
  datetime: '2026-11-01T10:20:30.456Z',
  uri: 'https://x.com/alice/status/1900000000000000001',
  source: 'X',
  label: '#bitcoin',
  content_size_bytes: 811,
  tweet: {
    id: '1900000000000000001',
    like_count: 5,
    retweet_count: 0,
    reply_count: 1,
    quote_count: 2,
    view_count: 9_000_000_000,
    bookmark_count: 3,
    language: 'en',
    hashtags: ['#Bitcoin', '#ai'],
    is_retweet: false,
    is_reply: true,
    is_quote: false,
    conversation_id: '1899999999999999999',
    in_reply_to_user_id: '42',
    in_reply_to_username: 'bob',
    quoted_tweet_id: null,
  },
  user: {
    id: '123456789012345678',
    username: 'alice',
    display_name: 'Alice Ω',
    verified: true,
    user_blue_verified: false,
    followers_count: 3_000_000_000,
    following_count: 12,
    user_description: 'Ω and 🚀',
    user_location: 'Lisbon',
    profile_image_url: 'https://pbs.twimg.com/profile_images/1/a_normal.jpg',
    cover_picture_url: 'https://pbs.twimg.com/profile_banners/1/2',
  },
  media: ['https://pbs.twimg.com/media/a.jpg', 'https://video.twimg.com/ext_tw_video/b.mp4'],
  content: TEXT,
};

const SPARSE_X: XItem = {
  text: '',
  datetime: '2026-11-01T11:00:00.000Z',
  uri: 'https://x.com/bob/status/1900000000000000002',
  source: 'X',
  label: null,
  content_size_bytes: 120,
  tweet: {
    id: '1900000000000000002',
    like_count: null,
    retweet_count: null,
    reply_count: null,
    quote_count: null,
    view_count: null,
    bookmark_count: null,
    language: null,
    hashtags: [],
    is_retweet: null,
    is_reply: null,
    is_quote: null,
    conversation_id: null,
    in_reply_to_user_id: null,
    in_reply_to_username: null,
    quoted_tweet_id: null,
  },
  user: {
    id: null,
    username: 'bob',
    display_name: null,
    verified: null,
    user_blue_verified: null,
    followers_count: null,
    following_count: null,
    user_description: null,
    user_location: null,
    profile_image_url: null,
    cover_picture_url: null,
  },
  media: null,
  content: '',
};

const POST: RedditItem = {
  uri: 'https://www.reddit.com/r/Bitcoin/comments/abc/title/',
  datetime: '2026-11-01T09:00:12.000Z',
  source: 'REDDIT',
  label: 'r/bitcoin',
  content_size_bytes: 300,
  id: 't3_abc',
  url: 'https://www.reddit.com/r/Bitcoin/comments/abc/title/',
  username: 'carol',
  communityName: 'r/Bitcoin',
  body: 'A body',
  createdAt: '2026-11-01T09:00:00.000Z',
  dataType: 'post',
  title: 'A title',
  parentId: null,
  media: ['https://i.redd.it/abc.jpeg'],
  is_nsfw: false,
  score: 187,
  upvote_ratio: 0.94,
  num_comments: 23,
  content: 'A title\n\nA body',
};

const COMMENT = redditComment();

describe('writeParquet', () => {
  let directory: string;
  beforeEach(() => (directory = mkdtempSync(join(tmpdir(), 'dataset-parquet-'))));
  afterEach(() => {
    jest.restoreAllMocks();
    rmSync(directory, { recursive: true, force: true });
  });

  async function jsonLines(name: string, items: StoredItemShape[]): Promise<string> {
    async function* rows() {
      for (const item of items) yield { uri: item.uri, datetime: new Date(item.datetime), item };
    }
    return (await writeJsonLines(join(directory, `${name}.jsonl.gz`), rows())).file;
  }

  /** The rows of each of the file's row groups, in order, as DuckDB reads its footer. */
  async function rowGroupSizes(file: string): Promise<unknown[]> {
    const groups = await queryParquet(
      file,
      `SELECT DISTINCT row_group_id, row_group_num_rows AS n
       FROM parquet_metadata($file) ORDER BY row_group_id`,
    );
    return groups.map((group) => group.n);
  }

  it('writes X items as flat typed columns with lists and timestamps, value for value', async () => {
    const source = await jsonLines('x', [FULL_X, SPARSE_X]);
    const written = await writeParquet('x', source, parquetPathBeside(source));
    expect(written.rows).toBe(2);
    const { columns, rows } = await readParquet(join(directory, 'x.parquet'));
    // Every column: a type changed in X_COLUMNS (like_count a DOUBLE) went unnoticed while only
    // some were checked (a mutation audit's finding).
    expect(columns).toEqual({
      uri: 'VARCHAR',
      label: 'VARCHAR',
      datetime: 'TIMESTAMP',
      username: 'VARCHAR',
      text: 'VARCHAR',
      tweet_hashtags: 'VARCHAR[]',
      timestamp: 'TIMESTAMP',
      url: 'VARCHAR',
      media: 'VARCHAR[]',
      user_id: 'VARCHAR',
      user_display_name: 'VARCHAR',
      user_verified: 'BOOLEAN',
      tweet_id: 'VARCHAR',
      is_reply: 'BOOLEAN',
      is_quote: 'BOOLEAN',
      conversation_id: 'VARCHAR',
      in_reply_to_user_id: 'VARCHAR',
      language: 'VARCHAR',
      in_reply_to_username: 'VARCHAR',
      quoted_tweet_id: 'VARCHAR',
      like_count: 'BIGINT',
      retweet_count: 'BIGINT',
      reply_count: 'BIGINT',
      quote_count: 'BIGINT',
      view_count: 'BIGINT',
      bookmark_count: 'BIGINT',
      user_blue_verified: 'BOOLEAN',
      user_description: 'VARCHAR',
      user_location: 'VARCHAR',
      profile_image_url: 'VARCHAR',
      cover_picture_url: 'VARCHAR',
      user_followers_count: 'BIGINT',
      user_following_count: 'BIGINT',
      is_retweet: 'BOOLEAN',
    });
    expect(rows).toEqual(expectedRows([FULL_X, SPARSE_X], columns));
    expect(rows.map((row) => [row.timestamp, row.media])).toEqual([
      ['2026-11-01T10:20:00.000Z', FULL_X.media],
      ['2026-11-01T11:00:00.000Z', null],
    ]);
  });

  it('writes rows of a file compiled by an earlier release in the current columns', async () => {
    const legacy = {
      uri: FULL_X.uri,
      datetime: FULL_X.datetime,
      source: 'X' as const,
      label: FULL_X.label,
      content: TEXT,
      user: { ...SPARSE_X.user, username: 'alice', followers_count: 7 },
      tweet: { ...SPARSE_X.tweet, id: FULL_X.tweet.id, hashtags: ['#Bitcoin'] },
      media: [{ url: 'https://pbs.twimg.com/media/a.jpg', type: 'photo' }],
    };
    const source = await jsonLines('legacy', [legacy]);
    await writeParquet('x', source, parquetPathBeside(source));
    const { columns, rows } = await readParquet(join(directory, 'legacy.parquet'));
    expect(rows).toEqual(expectedRows([currentItemShape(legacy)], columns));
    expect(rows[0]).toMatchObject({
      text: TEXT,
      user_followers_count: 7,
      media: ['https://pbs.twimg.com/media/a.jpg'],
      view_count: null,
    });
  });

  it('writes Reddit posts and comments, the field a kind lacks as null', async () => {
    const source = await jsonLines('r', [POST, COMMENT]);
    await writeParquet('reddit', source, parquetPathBeside(source));
    const { columns, rows } = await readParquet(join(directory, 'r.parquet'));
    expect(columns).toEqual({
      uri: 'VARCHAR',
      label: 'VARCHAR',
      datetime: 'TIMESTAMP',
      id: 'VARCHAR',
      url: 'VARCHAR',
      username: 'VARCHAR',
      communityName: 'VARCHAR',
      body: 'VARCHAR',
      createdAt: 'TIMESTAMP',
      dataType: 'VARCHAR',
      title: 'VARCHAR',
      parentId: 'VARCHAR',
      media: 'VARCHAR[]',
      is_nsfw: 'BOOLEAN',
      score: 'BIGINT',
      upvote_ratio: 'DOUBLE',
      num_comments: 'BIGINT',
    });
    expect(rows).toEqual(expectedRows([POST, COMMENT], columns));
    expect(rows.map((row) => [row.title, row.parentId])).toEqual([
      ['A title', null],
      [null, 't3_abc'],
    ]);
  });

  it('finds every row by a filter on its text, whatever characters the text starts with', async () => {
    // UTF-16 order (JavaScript's <) and UTF-8 byte order (every reader's) disagree between astral
    // characters and U+E000..U+FFFF: column statistics written in the first order made DuckDB
    // skip the row group holding '🚀…' when it filtered on that value.
    const rocket = { ...SPARSE_X, uri: `${SPARSE_X.uri}1`, text: '🚀 moon #ai' };
    const bracket = { ...SPARSE_X, uri: `${SPARSE_X.uri}2`, text: '｢quote｣ test #ai' };
    const named = {
      ...SPARSE_X,
      uri: `${SPARSE_X.uri}3`,
      user: { ...SPARSE_X.user, display_name: '🚀 Rocket' },
      tweet: { ...SPARSE_X.tweet, hashtags: ['#🚀'] },
    };
    const other = {
      ...SPARSE_X,
      uri: `${SPARSE_X.uri}4`,
      user: { ...SPARSE_X.user, display_name: '｢name｣' },
    };
    const source = await jsonLines('astral', [rocket, bracket, named, other]);
    const file = parquetPathBeside(source);
    await writeParquet('x', source, file);
    const count = async (where: string, value: string) =>
      (
        await queryParquet(file, `SELECT count(*) AS n FROM read_parquet($file) WHERE ${where}`, {
          value,
        })
      )[0].n;
    expect(await count('text = $value', '🚀 moon #ai')).toBe(1);
    expect(await count('text >= $value', '🚀')).toBe(1);
    expect(await count("text LIKE $value || '%'", '🚀')).toBe(1);
    expect(await count('user_display_name = $value', '🚀 Rocket')).toBe(1);
    expect(await count('list_contains(tweet_hashtags, $value)', '#🚀')).toBe(1);
  });

  it('hashes the bytes it wrote, and writes the same bytes every time, metadata included', async () => {
    const source = await jsonLines('x', [FULL_X, SPARSE_X]);
    const metadata = parquetMetadata(
      {
        id: 'tao-x',
        platform: 'x',
        label: '#tao',
        keyword: null,
        post_start: new Date('2026-11-01T00:00:00Z'),
        post_end: null,
        registered_by: '5Hotkey',
      },
      'e3b0c442',
    );
    expect(metadata).toEqual({
      task_id: 'tao-x',
      source: 'X',
      label: '#tao',
      post_start_datetime: '2026-11-01T00:00:00.000Z',
      registered_by: '5Hotkey',
      jsonl_sha256: 'e3b0c442',
      dataset_format_version: '1',
    });
    const first = await writeParquet('x', source, join(directory, 'a.parquet'), metadata);
    const second = await writeParquet('x', source, join(directory, 'b.parquet'), metadata);
    expect(await readParquetMetadata(join(directory, 'a.parquet'))).toEqual(metadata);
    const bytes = readFileSync(join(directory, 'a.parquet'));
    expect(first.sha256).toBe(createHash('sha256').update(bytes).digest('hex'));
    expect(first.bytes).toBe(bytes.length);
    expect(second.sha256).toBe(first.sha256);
  });

  it('closes a row group at its character budget as well as at 1000 rows, rows unchanged', async () => {
    // Each group is encoded at once on the event loop: a 1000-row group of long texts stalled
    // the API for seconds. Each comment's line is over half the budget: two make a group.
    const body = 'x'.repeat(ROW_GROUP_CHARS / 2);
    const items = Array.from({ length: 5 }, (_, index) =>
      redditComment({ uri: `${COMMENT.uri}${index}`, body: `${index}${body}` }),
    );
    const source = await jsonLines('long', items);
    const file = parquetPathBeside(source);
    expect((await writeParquet('reddit', source, file)).rows).toBe(5);
    expect(await rowGroupSizes(file)).toEqual([2, 2, 1]);
    const { columns, rows } = await readParquet(file);
    expect(rows).toEqual(expectedRows(items, columns));
  });

  it('closes a row group of short items at 1000 rows', async () => {
    const items = Array.from({ length: 2001 }, (_, index) => ({
      ...SPARSE_X,
      uri: `${SPARSE_X.uri}${index}`,
    }));
    const source = await jsonLines('short', items);
    const file = parquetPathBeside(source);
    await writeParquet('x', source, file);
    expect(await rowGroupSizes(file)).toEqual([1000, 1000, 1]);
  });

  it("leaves the event loop free while it encodes: requests wait on none of the writer's work", async () => {
    // The writer encodes a row group, and at its close the whole footer, in one go: on the API's
    // event loop a 1,000,000-row file stalled every request for 9 s (a scale audit). An item
    // larger than the row group budget is one such group: seconds of encoding at once, most of
    // the write's time. Off the event loop, the longest wait is a small part of it. Relative, not
    // absolute: on a loaded machine (CI, three suites on two CPUs) the loop waited 490 ms for the
    // CPU alone, with the encoding in its worker.
    const items = [
      redditComment({ uri: `${COMMENT.uri}0`, body: randomBytes(6_000_000).toString('hex') }),
    ];
    const source = await jsonLines('large', items);
    const delay = monitorEventLoopDelay({ resolution: 10 });
    delay.enable();
    const started = performance.now();
    const written = await writeParquet('reddit', source, parquetPathBeside(source));
    const elapsedMs = performance.now() - started;
    delay.disable();
    expect(written.rows).toBe(1);
    expect(delay.max / 1e6).toBeLessThan(elapsedMs / 3);
  });

  it('gives up once told to stop, ending its worker thread and leaving no file', async () => {
    const items = Array.from({ length: 3000 }, (_, index) => ({
      ...SPARSE_X,
      uri: `${SPARSE_X.uri}${index}`,
    }));
    const source = await jsonLines('stopped', items);
    const terminate = jest.spyOn(Worker.prototype, 'terminate');
    // Looked at before the worker starts, then while it converts.
    let looks = 0;
    const stopping = () => ++looks > 1;

    await expect(
      writeParquet('x', source, parquetPathBeside(source), {}, { stopping }),
    ).rejects.toBeInstanceOf(WriteStopped);

    expect(terminate).toHaveBeenCalledTimes(1);
    expect(readdirSync(directory)).toEqual(['stopped.jsonl.gz']);
  });

  // The file's writer failing (ENOSPC) destroys the output: the worker then has nowhere to
  // write, and a conversion that waited for the output's `drain` would wait for ever.
  it('fails, ending its worker thread, when the output closes before the file is written', async () => {
    const items = Array.from({ length: 3000 }, (_, index) => ({
      ...SPARSE_X,
      uri: `${SPARSE_X.uri}${index}`,
    }));
    const source = await jsonLines('output-closed', items);
    const terminate = jest.spyOn(Worker.prototype, 'terminate');
    const output = new Writable({
      write(_chunk, _encoding, done) {
        // As writeFileAtomically's stream does when its file cannot take the bytes.
        this.destroy();
        done();
      },
    });

    await expect(
      convertInWorker({ platform: 'x', jsonlPath: source, metadata: {} }, output, () => false),
    ).rejects.toThrow('the Parquet output closed before the file was written');

    expect(terminate).toHaveBeenCalledTimes(1);
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

describe(parquetMetadata.name, () => {
  const task = {
    id: 'btc-window',
    platform: 'x' as const,
    label: '#bitcoin',
    keyword: 'etf',
    post_start: new Date('2026-01-01T00:00:00Z'),
    post_end: new Date('2026-01-08T00:00:00Z'),
    registered_by: '5Hotkey',
  };

  it("records every parameter of the task, the JSON lines file's hash and the writer's version", () => {
    expect(parquetMetadata(task, 'a'.repeat(64))).toEqual({
      task_id: 'btc-window',
      source: 'X',
      label: '#bitcoin',
      keyword: 'etf',
      post_start_datetime: '2026-01-01T00:00:00.000Z',
      post_end_datetime: '2026-01-08T00:00:00.000Z',
      registered_by: '5Hotkey',
      jsonl_sha256: 'a'.repeat(64),
      dataset_format_version: String(PARQUET_VERSION),
    });
  });

  it('leaves out what the task does not set', () => {
    const metadata = parquetMetadata(
      { ...task, platform: 'reddit', label: null, post_start: null, post_end: null },
      'a'.repeat(64),
    );
    expect(Object.keys(metadata).sort()).toEqual(
      [
        'task_id',
        'source',
        'keyword',
        'registered_by',
        'jsonl_sha256',
        'dataset_format_version',
      ].sort(),
    );
    expect(metadata.source).toBe('REDDIT');
  });
});

describe(hasCurrentParquet.name, () => {
  const task = {
    parquet_file: '/srv/data/datasets/tao.parquet',
    parquet_sha256: 'b'.repeat(64),
  } as TaskRow;

  // A file an earlier writer made is written again at its next download (PARQUET_VERSION).
  it("counts only a file this release's writer made as current", () => {
    expect(hasCurrentParquet({ ...task, parquet_version: PARQUET_VERSION })).toBe(true);
    expect(hasCurrentParquet({ ...task, parquet_version: PARQUET_VERSION - 1 })).toBe(false);
    expect(hasCurrentParquet({ ...task, parquet_version: null })).toBe(false);
    expect(
      hasCurrentParquet({ ...task, parquet_file: null, parquet_version: PARQUET_VERSION }),
    ).toBe(false);
  });
});

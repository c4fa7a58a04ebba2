import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { Agent, get as httpGet, IncomingMessage } from 'node:http';
import { connect } from 'node:net';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  renameSync,
  rmSync,
  truncateSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { Logger } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { Clock } from '../../src/common/clock/clock';
import { datasetPath } from '../../src/modules/tasks/dataset-path';
import * as datasetWriter from '../../src/modules/tasks/dataset-writer';
import {
  DatasetParquetService,
  PARQUET_RETRY_MS,
  ParquetBusyError,
} from '../../src/modules/tasks/dataset-parquet.service';
import { TaskLifecycleService } from '../../src/modules/tasks/task-lifecycle.service';
import { answeredItem } from '../../src/network/answered-items';
import { DataItem, RedditItem, XItem } from '../../src/network/protocol';
import { itemKey } from '../../src/network/item-uri';
import { TaskLifecycleRepository } from '../../src/modules/tasks/task-lifecycle.repository';
import { createDatabase, dropDatabase, scratchDatabaseName } from '../support/database';
import { startTestNetwork, TestNetwork } from '../support/network';
import { eventually, scrape } from '../support/metrics';
import { sample } from '../support/prometheus-text';
import {
  expectedRows,
  queryParquet,
  readParquet,
  readParquetMetadata,
} from '../support/parquet-reader';
import { startTestApp, TEST_MASTER_KEY, TestApp } from '../support/test-app';
import { registerTask } from '../support/tasks';
import { HOSTED_DATE, keyPaths, liveItem } from '../support/items';
import { asBytes, jsonLines } from '../support/downloads';

// A plain copy of the module, whose exports a test can spy on: the transform's CommonJS
// exports are read-only getters (docs/decisions.md, "Test tiers").
jest.mock('../../src/modules/tasks/dataset-writer', () => ({
  __esModule: true,
  ...jest.requireActual<object>('../../src/modules/tasks/dataset-writer'),
}));

const DAY = 24 * 3600 * 1000;
const PARQUET = 'application/vnd.apache.parquet';

describe('Task datasets as Parquet', () => {
  let network: TestNetwork;
  let dataDir: string;
  let databaseName: string;
  let app: TestApp;
  let redditLabel: string;

  const get = (path: string) => app.http.get(`/api/v1/${path}`).set('X-API-Key', TEST_MASTER_KEY);
  /** The body as the exact bytes sent. */
  const download = (path: string) => asBytes(get(path));
  const register = (id: string, label: string, platform: 'x' | 'reddit') =>
    registerTask(app.app, '5ValidatorHotkeyForDatasets', id, label, platform);
  const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

  /** The JSON lines dataset's items and the Parquet file's rows as DuckDB reads them. */
  async function bothFormats(id: string) {
    const jsonl = await download(`tasks/${id}/dataset`).expect(200);
    const items = jsonLines<DataItem>(jsonl.body as Buffer);
    const parquet = await download(`tasks/${id}/dataset?format=parquet`).expect(200);
    const file = join(dataDir, `downloaded-${id}.parquet`);
    writeFileSync(file, parquet.body as Buffer);
    return { items, parquet, file, read: await readParquet(file) };
  }

  beforeAll(async () => {
    network = await startTestNetwork(3);
    dataDir = mkdtempSync(join(tmpdir(), 'gateway-datasets-'));
    databaseName = scratchDatabaseName('datasets');
    const databaseUrl = await createDatabase(process.env.TEST_RUN_SERVER_URL!, databaseName);
    app = await startTestApp({
      ...network.env,
      DATABASE_URL: databaseUrl,
      DATA_DIR: dataDir,
      QUERY_MINERS: '3',
      QUERY_QUORUM: '3',
      QUERY_CACHE_TTL_SECONDS: '0',
      TASK_COLLECT_LIMIT: '1000',
      // More collections within the hour (final ones included) than a miner's calls for tasks.
      MINER_CALL_BUDGETS: 'OnDemandRequest=none',
    });
    redditLabel = network.devnet.corpus.items.find((item) => item.source === 'REDDIT')!.label!;
    await register('btc-x', '#bitcoin', 'x');
    await register('sub-reddit', redditLabel, 'reddit');
    const lifecycle = app.app.get(TaskLifecycleService);
    expect(await lifecycle.runOnce()).toEqual({ collected: 2, compiled: 0 });
    app.app.get(Clock).advance(7 * DAY);
    // Each task's final collection, up to its expiry, then its compile.
    expect(await lifecycle.runOnce()).toEqual({ collected: 2, compiled: 2 });
    await register('still-active', '#ai', 'x');
  });
  afterAll(async () => {
    await app.close();
    await network.stop();
    await dropDatabase(process.env.TEST_RUN_SERVER_URL!, databaseName);
    rmSync(dataDir, { recursive: true, force: true });
  });

  it.each(['btc-x', 'sub-reddit'])(
    'serves %s as Parquet that DuckDB reads as the JSON lines rows, column by column',
    async (id) => {
      const { items, read } = await bothFormats(id);
      expect(items.length).toBeGreaterThan(0);
      expect(read.rows).toHaveLength(items.length);
      const expected = expectedRows(items, read.columns);
      for (const column of Object.keys(read.columns))
        expect({ column, values: read.rows.map((row) => row[column]) }).toEqual({
          column,
          values: expected.map((row) => row[column]),
        });
      expect(read.columns).toMatchObject({ uri: 'VARCHAR', datetime: 'TIMESTAMP' });
    },
  );

  it('types the X columns: lists as lists, datetimes as timestamps, counts as integers', async () => {
    const { items, read } = await bothFormats('btc-x');
    expect(read.columns).toMatchObject({
      username: 'VARCHAR',
      text: 'VARCHAR',
      tweet_hashtags: 'VARCHAR[]',
      timestamp: 'TIMESTAMP',
      media: 'VARCHAR[]',
      user_followers_count: 'BIGINT',
      view_count: 'BIGINT',
      is_retweet: 'BOOLEAN',
    });
    // The devnet's items do carry lists and the newer fields, so the comparison above saw them
    // filled as well as null.
    const posts = items.filter((item) => item.source === 'X');
    expect(posts.some((post) => post.media !== null)).toBe(true);
    expect(posts.some((post) => post.media === null)).toBe(true);
    expect(posts.some((post) => post.tweet.hashtags.length > 1)).toBe(true);
    expect(posts.some((post) => post.tweet.view_count !== null)).toBe(true);
    expect(posts.some((post) => post.tweet.view_count === null)).toBe(true);
  });

  it('holds the items in the hosted API shape in the JSON lines dataset, as the corpus has them', async () => {
    for (const id of ['btc-x', 'sub-reddit']) {
      const { items } = await bothFormats(id);
      // Alone, an empty dataset passed the loops below (a test suite audit).
      expect(items.length).toBeGreaterThan(0);
      const corpus = new Map(network.devnet.corpus.items.map((item) => [item.uri, item]));
      for (const item of items) {
        expect(item).toEqual(answeredItem(corpus.get(item.uri)!));
        expect(item.datetime).toMatch(HOSTED_DATE);
      }
      // Keys in the order of live answers, not the jsonb column's they were stored in.
      for (const item of items)
        expect(keyPaths(item)).toEqual(keyPaths(liveItem(corpus.get(item.uri)!)));
    }
  });

  it('types the Reddit columns: createdAt a timestamp, title and parentId null where a kind lacks them', async () => {
    const { read } = await bothFormats('sub-reddit');
    expect(read.columns).toMatchObject({
      createdAt: 'TIMESTAMP',
      title: 'VARCHAR',
      parentId: 'VARCHAR',
    });
    const posts = read.rows.filter((row) => row.dataType === 'post');
    const comments = read.rows.filter((row) => row.dataType === 'comment');
    expect(posts.length).toBeGreaterThan(0);
    expect(comments.length).toBeGreaterThan(0);
    expect(posts.every((row) => typeof row.title === 'string' && row.parentId === null)).toBe(true);
    expect(comments.every((row) => row.title === null && typeof row.parentId === 'string')).toBe(
      true,
    );
  });

  it("sends the Parquet file with its size and hash, as the task's dataset and manifest list them", async () => {
    const task = (await get('tasks/btc-x').expect(200)).body;
    const { parquet, file } = await bothFormats('btc-x');
    const bytes = parquet.body as Buffer;
    // Where the rows come from, for a file found on its own.
    expect(await readParquetMetadata(file)).toEqual({
      task_id: 'btc-x',
      source: 'X',
      label: '#bitcoin',
      registered_by: '5ValidatorHotkeyForDatasets',
      jsonl_sha256: task.dataset.sha256,
      dataset_format_version: '1',
    });
    expect(parquet.headers['content-type']).toBe(PARQUET);
    expect(parquet.headers['content-disposition']).toBe('attachment; filename="btc-x.parquet"');
    expect(Number(parquet.headers['content-length'])).toBe(bytes.length);
    expect(parquet.headers['x-content-sha256']).toBe(sha256(bytes));
    expect(bytes.subarray(0, 4).toString()).toBe('PAR1');
    expect(task.dataset.parquet).toEqual({
      content_type: PARQUET,
      bytes: bytes.length,
      sha256: sha256(bytes),
      download_url: '/api/v1/tasks/btc-x/dataset?format=parquet',
    });
    const manifest = JSON.parse(
      readFileSync(`${datasetPath(dataDir, 'btc-x')}.manifest.json`, 'utf8'),
    ) as Record<string, unknown>;
    expect(manifest).toMatchObject({
      task_id: 'btc-x',
      format: 'jsonl.gz',
      sha256: task.dataset.sha256,
      parquet: { file: 'btc-x.parquet', bytes: bytes.length, sha256: sha256(bytes) },
    });
    // The JSON lines file stays the default, and `format=jsonl` names it.
    const jsonl = await download('tasks/btc-x/dataset?format=jsonl').expect(200);
    expect(jsonl.headers['content-type']).toBe('application/gzip');
    expect(jsonl.headers['x-content-sha256']).toBe(task.dataset.sha256);
  });

  it("lists its oldest and newest item's datetime as the dataset's data_start and data_end", async () => {
    for (const id of ['btc-x', 'sub-reddit']) {
      const { items } = await bothFormats(id);
      const times = items.map((item) => Date.parse(item.datetime));
      const oldest = new Date(Math.min(...times)).toISOString();
      const newest = new Date(Math.max(...times)).toISOString();
      // Items of distinct times, so that a range listed the wrong way round would show.
      expect(oldest < newest).toBe(true);
      const task = (await get(`tasks/${id}`).expect(200)).body;
      expect(task.dataset).toMatchObject({ data_start: oldest, data_end: newest });
      const manifest = JSON.parse(
        readFileSync(`${datasetPath(dataDir, id)}.manifest.json`, 'utf8'),
      ) as Record<string, unknown>;
      expect(manifest).toMatchObject({ data_start: oldest, data_end: newest });
    }
  });

  // What the compile logs (TaskCompiler.warnOfFinalGap) a client reads before downloading
  // (docs/decisions.md, "Scraping task lifecycle"); both answers checked against the document.
  it("shows the posting times a final collection did not reach as the dataset's gap, null when it did", async () => {
    expect((await get('tasks/btc-x').expect(200)).body.dataset.gap).toBeNull();

    await register('short-final', '#bitcoin', 'x');
    const lifecycle = app.app.get(TaskLifecycleService);
    await lifecycle.collectDue();
    // Its last collection an hour before expiry, and no final one within the wait (an interval,
    // over by now): the budget went to other tasks.
    const now = app.app.get(Clock).now().getTime();
    const expiry = new Date(now - 2 * 3_600_000).toISOString();
    const lastHead = new Date(now - 3 * 3_600_000).toISOString();
    await app.app
      .get(DataSource)
      .query(
        `UPDATE scraping_tasks SET expires_at = $2, collect_head = $3, last_collected_at = $3 WHERE id = $1`,
        ['short-final', expiry, lastHead],
      );
    expect(await lifecycle.compileExpired()).toBe(1);

    const task = (await get('tasks/short-final').expect(200)).body;
    expect(task.state).toBe('completed');
    expect(task.dataset.gap).toEqual({ start: lastHead, end: expiry });
    const listed = (await get('tasks?state=completed').expect(200)).body.tasks as {
      id: string;
      dataset: { gap: unknown };
    }[];
    expect(listed.find((listedTask) => listedTask.id === 'short-final')?.dataset.gap).toEqual({
      start: lastHead,
      end: expiry,
    });
  });

  it('answers HEAD with the headers alone, and a Range with the whole file and Accept-Ranges: none', async () => {
    for (const query of ['', '?format=parquet']) {
      const full = await download(`tasks/btc-x/dataset${query}`).expect(200);
      const head = await app.http
        .head(`/api/v1/tasks/btc-x/dataset${query}`)
        .set('X-API-Key', TEST_MASTER_KEY)
        .expect(200);
      expect(head.headers['content-length']).toBe(full.headers['content-length']);
      expect(head.headers['x-content-sha256']).toBe(full.headers['x-content-sha256']);
      expect(head.headers['content-type']).toBe(full.headers['content-type']);
      expect(head.headers['content-disposition']).toBe(full.headers['content-disposition']);
      expect(head.headers.etag).toBe(full.headers.etag);
      // Ranges are refused out loud (Accept-Ranges: none, RFC 9110 §14.3): a Range request,
      // If-Range or not, gets the whole file.
      expect(full.headers['accept-ranges']).toBe('none');
      expect(head.headers['accept-ranges']).toBe('none');
      const ranged = await download(`tasks/btc-x/dataset${query}`).set('Range', 'bytes=0-9');
      expect(ranged.status).toBe(200);
      expect(ranged.headers['accept-ranges']).toBe('none');
      expect(sha256(ranged.body as Buffer)).toBe(full.headers['x-content-sha256']);
      const resumed = await download(`tasks/btc-x/dataset${query}`)
        .set('Range', 'bytes=10-')
        .set('If-Range', full.headers.etag)
        .expect(200);
      expect(sha256(resumed.body as Buffer)).toBe(full.headers['x-content-sha256']);
    }
  });

  it('tags each file with its SHA-256, and answers 304 without the body while If-None-Match names it', async () => {
    for (const query of ['', '?format=parquet']) {
      const path = `tasks/btc-x/dataset${query}`;
      const full = await download(path).expect(200);
      const tag = `"${full.headers['x-content-sha256']}"`;
      expect(full.headers.etag).toBe(tag);
      expect(full.headers['cache-control']).toBe('private, no-cache');
      for (const named of [tag, `W/${tag}`, `"other", ${tag}`, '*']) {
        const again = await get(path).set('If-None-Match', named).expect(304);
        expect(again.headers.etag).toBe(tag);
        expect(again.text ?? '').toBe('');
      }
      const changed = await download(path).set('If-None-Match', '"not-this-file"').expect(200);
      expect(sha256(changed.body as Buffer)).toBe(full.headers['x-content-sha256']);
    }
  });

  // RFC 9110 §15.4.5: a 304 sends the Cache-Control a 200 would. The 304 sent Cache-Control and
  // Accept-Ranges, which the document listed on the 200 alone (a reviewer's finding).
  it("sends on each answer, GET or HEAD, exactly the download's headers the document lists for it", async () => {
    const document = (await app.http.get('/openapi.json').expect(200)).body;
    const responses: Record<string, { headers?: Record<string, unknown> }> =
      document.paths['/api/v1/tasks/{id}/dataset'].get.responses;
    const shared = new Set(Object.keys(document.components.headers));
    // The operation's own headers: the shared ones (request id, rate limits) are the same on
    // every answer, and the master key has no rate limit to send.
    const own = new Set(
      Object.values(responses)
        .flatMap(({ headers }) => Object.keys(headers ?? {}))
        .filter((name) => !shared.has(name)),
    );
    const documented = (status: number) =>
      Object.keys(responses[status].headers ?? {})
        .filter((name) => own.has(name))
        .map((name) => name.toLowerCase())
        .sort();
    const sent = (headers: Record<string, string>) =>
      [...own]
        .map((name) => name.toLowerCase())
        .filter((name) => name in headers)
        .sort();

    const full = await download('tasks/btc-x/dataset').expect(200);
    const tag = full.headers.etag;
    const since = full.headers['last-modified'];
    const unlike = new Date(Date.parse(since) - 1000).toUTCString();
    for (const method of ['get', 'head'] as const) {
      const ask = (headers: Record<string, string>) =>
        app.http[method]('/api/v1/tasks/btc-x/dataset')
          .set('X-API-Key', TEST_MASTER_KEY)
          .set(headers);
      for (const [headers, status] of [
        [{}, 200],
        [{ 'If-None-Match': tag }, 304],
        [{ 'If-Modified-Since': since }, 304],
        [{ 'If-Match': '"other"' }, 412],
        [{ 'If-Unmodified-Since': unlike }, 412],
      ] as const) {
        const answer = await ask(headers).expect(status);
        expect({ method, headers, sent: sent(answer.headers) }).toEqual({
          method,
          headers,
          sent: documented(status),
        });
      }
    }
    expect(documented(304)).toEqual(
      expect.arrayContaining(['cache-control', 'accept-ranges', 'etag', 'last-modified']),
    );
  });

  // RFC 9110 §13.1.1: a client that resumes or revalidates a download by its ETag (If-Match) is
  // told once the file changed (a dataset compiled again, a Parquet file written again), not sent
  // the new file as if it were the one it holds; If-Match was ignored (an audit's finding).
  it('answers If-Match naming the file (or *) with it, and 412 with the current ETag when it names another', async () => {
    for (const query of ['', '?format=parquet']) {
      const path = `tasks/btc-x/dataset${query}`;
      const full = await download(path).expect(200);
      const tag = full.headers.etag;
      for (const named of [tag, '*', `"other", ${tag}`]) {
        const matched = await download(path).set('If-Match', named).expect(200);
        expect(matched.body).toEqual(full.body);
        expect(matched.headers.etag).toBe(tag);
      }
      // Compared strongly: a weak tag names no bytes.
      for (const named of ['"other"', `W/${tag}`]) {
        const refused = await get(path).set('If-Match', named).expect(412);
        expect(refused.headers['content-type']).toMatch(/^application\/json/);
        expect(refused.body).toEqual({
          detail:
            "The dataset file of task 'btc-x' is not the one If-Match names; ETag names the current file",
          request_id: expect.any(String),
        });
        expect(refused.headers.etag).toBe(tag);
        expect(refused.headers['x-content-sha256']).toBe(full.headers['x-content-sha256']);
      }
      await app.http
        .head(`/api/v1/${path}`)
        .set('X-API-Key', TEST_MASTER_KEY)
        .set('If-Match', '"other"')
        .expect(412);
      // If-Match first (RFC 9110 §13.2.2): a 412, not the 304 If-None-Match alone is answered.
      await get(path).set('If-Match', '"other"').set('If-None-Match', tag).expect(412);
      await get(path).set('If-Match', tag).set('If-None-Match', tag).expect(304);
    }
    // The task's own checks come first, as for If-None-Match.
    await get('tasks/nope/dataset').set('If-Match', '*').expect(404);
    await get('tasks/still-active/dataset').set('If-Match', '"other"').expect(409);
  });

  // RFC 9110 §8.8.2: Last-Modified, when the file was written as the task records it (the same on
  // every replica), and the date conditions that compare with it (§13.1.3, §13.1.4), each only
  // without its entity tag counterpart (§13.2.2). Both were missing: If-Modified-Since and
  // If-Unmodified-Since were ignored.
  it('says when each file was written in Last-Modified, and answers If-Modified-Since and If-Unmodified-Since by it', async () => {
    const task = (await get('tasks/btc-x').expect(200)).body;
    // Written at the compile, which completed the task; to the second.
    const written = new Date(Math.floor(Date.parse(task.completed_at) / 1000) * 1000);
    const lastModified = written.toUTCString();
    const before = new Date(written.getTime() - 1000).toUTCString();
    const after = new Date(written.getTime() + 1000).toUTCString();
    for (const query of ['', '?format=parquet']) {
      const path = `tasks/btc-x/dataset${query}`;
      const full = await download(path).expect(200);
      const tag = full.headers.etag;
      expect(full.headers['last-modified']).toBe(lastModified);
      const head = await app.http
        .head(`/api/v1/${path}`)
        .set('X-API-Key', TEST_MASTER_KEY)
        .expect(200);
      expect(head.headers['last-modified']).toBe(lastModified);

      for (const since of [lastModified, after]) {
        const unchanged = await get(path).set('If-Modified-Since', since).expect(304);
        expect(unchanged.headers['last-modified']).toBe(lastModified);
        expect(unchanged.headers.etag).toBe(tag);
        expect(unchanged.text ?? '').toBe('');
        const kept = await download(path).set('If-Unmodified-Since', since).expect(200);
        expect(kept.body).toEqual(full.body);
      }
      const changed = await download(path).set('If-Modified-Since', before).expect(200);
      expect(changed.body).toEqual(full.body);
      expect(changed.headers['last-modified']).toBe(lastModified);
      const refused = await get(path).set('If-Unmodified-Since', before).expect(412);
      expect(refused.headers['content-type']).toMatch(/^application\/json/);
      expect(refused.body).toEqual({
        detail:
          "The dataset file of task 'btc-x' was written after the If-Unmodified-Since date; " +
          'Last-Modified says when, ETag names the current file',
        request_id: expect.any(String),
      });
      expect(refused.headers['last-modified']).toBe(lastModified);
      expect(refused.headers.etag).toBe(tag);
      await app.http
        .head(`/api/v1/${path}`)
        .set('X-API-Key', TEST_MASTER_KEY)
        .set('If-Unmodified-Since', before)
        .expect(412);
      await app.http
        .head(`/api/v1/${path}`)
        .set('X-API-Key', TEST_MASTER_KEY)
        .set('If-Modified-Since', lastModified)
        .expect(304);

      // If-None-Match, when given, is the only one of the two looked at; If-Match likewise.
      await get(path).set('If-None-Match', '"other"').set('If-Modified-Since', after).expect(200);
      await get(path).set('If-None-Match', tag).set('If-Modified-Since', before).expect(304);
      await get(path).set('If-Match', tag).set('If-Unmodified-Since', before).expect(200);
      const byTag = await get(path)
        .set('If-Match', '"other"')
        .set('If-Unmodified-Since', after)
        .expect(412);
      expect(byTag.body.detail).toBe(
        "The dataset file of task 'btc-x' is not the one If-Match names; ETag names the current file",
      );
      // A value that is no HTTP-date is ignored (§13.1.3, §13.1.4).
      for (const garbage of ['garbage', '1', task.completed_at]) {
        await get(path).set('If-Modified-Since', garbage).expect(200);
        await get(path).set('If-Unmodified-Since', garbage).expect(200);
      }
      // A date later than the server's time is ignored (§13.1.3).
      await get(path).set('If-Modified-Since', 'Fri, 31 Dec 9999 23:59:59 GMT').expect(200);
    }
    // The task's own checks come first, as for the entity tags.
    await get('tasks/nope/dataset').set('If-Unmodified-Since', before).expect(404);
    await get('tasks/still-active/dataset').set('If-Modified-Since', after).expect(409);
  });

  // The document bounds the four conditional headers (`maxLength`), but a longer one was read as
  // any other: a 1090-character If-None-Match list ending in the file's tag was a 304. Held as
  // FastAPI holds a Header(max_length=…): a 422 at ["header", name], before the task is looked up.
  it('refuses a conditional header longer than its documented maxLength with a 422 at ["header", name]', async () => {
    const path = 'tasks/btc-x/dataset';
    const full = await download(path).expect(200);
    const tag = full.headers.etag;
    const lastModified = full.headers['last-modified'];
    /** A tag list `length` characters long that names the file last. */
    const tagList = (length: number) => `"${'a'.repeat(length - tag.length - 4)}", ${tag}`;
    expect(tagList(1024)).toHaveLength(1024);
    // At the bound, read as before: a tag list of 1024 characters, RFC 850's longest date (33).
    await get(path).set('If-None-Match', tagList(1024)).expect(304);
    await download(path).set('If-Match', tagList(1024)).expect(200);
    const [, day, month, year, time] = /^\w+, (\d{2}) (\w{3}) \d{2}(\d{2}) (\S+) GMT$/.exec(
      lastModified,
    )!;
    const rfc850 = `Wednesday, ${day}-${month}-${year} ${time} GMT`;
    expect(rfc850).toHaveLength(33);
    await get(path).set('If-Modified-Since', rfc850).expect(304);
    await download(path).set('If-Unmodified-Since', rfc850).expect(200);

    const tooLong = (name: string, max: number) => ({
      loc: ['header', name],
      msg: `String should have at most ${max} characters`,
      type: 'string_too_long',
      ctx: { max_length: max },
    });
    // One character past the bound (a trailing space would be trimmed before it is read).
    const longDate = `${rfc850}0`;
    for (const [name, value, max] of [
      ['If-None-Match', tagList(1025), 1024],
      ['If-Match', tagList(1025), 1024],
      ['If-Modified-Since', longDate, 33],
      ['If-Unmodified-Since', longDate, 33],
    ] as const) {
      for (const query of ['', '?format=parquet']) {
        const refused = await get(`${path}${query}`).set(name, value).expect(422);
        expect(refused.body).toEqual({
          detail: [tooLong(name.toLowerCase(), max)],
          request_id: expect.any(String),
        });
      }
      await app.http
        .head(`/api/v1/${path}`)
        .set('X-API-Key', TEST_MASTER_KEY)
        .set(name, value)
        .expect(422);
      // Validation comes first: before the 404 of an unknown task and the 409 of an active one.
      await get('tasks/nope/dataset').set(name, value).expect(422);
      await get('tasks/still-active/dataset').set(name, value).expect(422);
    }
    // Every header too long is listed, in one answer.
    const all = await get(path)
      .set('If-Match', tagList(1025))
      .set('If-None-Match', tagList(2000))
      .set('If-Modified-Since', longDate)
      .set('If-Unmodified-Since', longDate)
      .expect(422);
    expect(all.body.detail).toEqual([
      tooLong('if-match', 1024),
      tooLong('if-none-match', 1024),
      tooLong('if-modified-since', 33),
      tooLong('if-unmodified-since', 33),
    ]);
    // With the query's error, in FastAPI's order: the query's, then the headers'.
    const withQuery = await get(`${path}?format=csv`)
      .set('If-None-Match', tagList(1025))
      .set('If-Modified-Since', longDate)
      .expect(422);
    expect(withQuery.body.detail).toEqual([
      expect.objectContaining({ loc: ['query', 'format'], type: 'enum' }),
      tooLong('if-none-match', 1024),
      tooLong('if-modified-since', 33),
    ]);
  });

  it('writes the Parquet file of a task completed before Parquet existed at its first Parquet download', async () => {
    const path = datasetPath(dataDir, 'sub-reddit');
    const before = (await get('tasks/sub-reddit').expect(200)).body;
    // As the task was left by a gateway without Parquet: no file, nothing recorded.
    unlinkSync(path.replace(/\.jsonl\.gz$/, '.parquet'));
    await app.app
      .get(DataSource)
      .query(
        `UPDATE scraping_tasks SET parquet_file = NULL, parquet_bytes = NULL, parquet_sha256 = NULL WHERE id = 'sub-reddit'`,
      );
    const legacy = (await get('tasks/sub-reddit').expect(200)).body;
    expect(legacy.dataset).not.toHaveProperty('parquet');

    // Downloads arriving together get the same file (one conversion, shared).
    const [first, second] = await Promise.all([
      download('tasks/sub-reddit/dataset?format=parquet').expect(200),
      download('tasks/sub-reddit/dataset?format=parquet').expect(200),
    ]);
    expect(sha256(first.body as Buffer)).toBe(first.headers['x-content-sha256']);
    expect(second.headers['x-content-sha256']).toBe(first.headers['x-content-sha256']);
    // The same bytes as written at completion: the writer is deterministic.
    expect(first.headers['x-content-sha256']).toBe(before.dataset.parquet.sha256);

    const after = (await get('tasks/sub-reddit').expect(200)).body;
    expect(after.dataset).toEqual(before.dataset);
    const manifest = JSON.parse(readFileSync(`${path}.manifest.json`, 'utf8')) as {
      sha256: string;
      parquet: { sha256: string };
    };
    expect(manifest.parquet.sha256).toBe(before.dataset.parquet.sha256);
    expect(manifest.sha256).toBe(before.dataset.sha256);
    const { items, read } = await bothFormats('sub-reddit');
    expect(read.rows).toEqual(expectedRows(items, read.columns));
  });

  // Conversions are bounded per process (docs/decisions.md, "Scraping task lifecycle"): past
  // the bound and its queue, the download is told when to come back.
  it('answers 503 with Retry-After when the server is busy writing other Parquet files', async () => {
    const parquet = app.app.get(DatasetParquetService);
    const busy = jest
      .spyOn(parquet, 'ensure')
      .mockRejectedValueOnce(new ParquetBusyError('sub-reddit'));
    try {
      const refused = await get('tasks/sub-reddit/dataset?format=parquet').expect(503);
      expect(refused.headers['retry-after']).toBe('10');
      expect(refused.headers['content-type']).toMatch(/^application\/json/);
      expect(refused.body).toEqual({
        detail:
          "The Parquet file of task 'sub-reddit' is not written yet and this server is busy writing " +
          'others; try again after Retry-After seconds. The JSON lines dataset (format=jsonl) holds ' +
          'the same rows',
        request_id: expect.any(String),
      });
    } finally {
      busy.mockRestore();
    }
    await download('tasks/sub-reddit/dataset?format=parquet').expect(200);
  });

  it('writes the recorded Parquet file again, the same bytes, when it is gone from the disk', async () => {
    const task = (await get('tasks/btc-x').expect(200)).body;
    const file = datasetPath(dataDir, 'btc-x').replace(/\.jsonl\.gz$/, '.parquet');
    const bytes = readFileSync(file);
    const { headers } = await get('tasks/btc-x/dataset?format=parquet').expect(200);
    unlinkSync(file);
    app.app.get(Clock).advance(60_000);
    const again = await download('tasks/btc-x/dataset?format=parquet').expect(200);
    expect(again.body).toEqual(bytes);
    expect(again.headers['x-content-sha256']).toBe(task.dataset.parquet.sha256);
    // The same bytes: written again, but not modified (If-Modified-Since still holds).
    expect(again.headers['last-modified']).toBe(headers['last-modified']);
    expect(readFileSync(file)).toEqual(bytes);
    expect((await get('tasks/btc-x').expect(200)).body.dataset).toEqual(task.dataset);
  });

  // A file cut short (a full disk, a copy broken off) was served as 200 under the recorded hash,
  // and a client revalidating its ETag was told 304 (an audit's finding).
  it('writes the recorded Parquet file again when the one on disk is not the size recorded', async () => {
    const task = (await get('tasks/btc-x').expect(200)).body;
    const file = datasetPath(dataDir, 'btc-x').replace(/\.jsonl\.gz$/, '.parquet');
    const bytes = readFileSync(file);
    writeFileSync(file, bytes.subarray(0, 1000));
    const again = await download('tasks/btc-x/dataset?format=parquet').expect(200);
    expect(again.body).toEqual(bytes);
    expect(again.headers['content-length']).toBe(String(bytes.length));
    expect(again.headers['x-content-sha256']).toBe(task.dataset.parquet.sha256);
    expect(readFileSync(file)).toEqual(bytes);
  });

  it('answers 503, not 200 or 304, when the JSON lines file is not the size recorded, in either format', async () => {
    const task = (await get('tasks/btc-x').expect(200)).body;
    const file = datasetPath(dataDir, 'btc-x');
    const bytes = readFileSync(file);
    writeFileSync(file, bytes.subarray(0, 1000));
    try {
      for (const format of ['jsonl', 'parquet']) {
        const response = await get(`tasks/btc-x/dataset?format=${format}`).expect(503);
        expect(response.body).toEqual({
          detail: "The dataset file of task 'btc-x' is missing on this server",
          request_id: expect.any(String),
        });
      }
      await get('tasks/btc-x/dataset').set('If-None-Match', `"${task.dataset.sha256}"`).expect(503);
    } finally {
      writeFileSync(file, bytes);
    }
    await get('tasks/btc-x/dataset').set('If-None-Match', `"${task.dataset.sha256}"`).expect(304);
  });

  // In a rolling upgrade, a replica of the release before still writes and records files with its
  // own writer after the new release's migrations ran (found by an upgrade audit).
  it('writes again a Parquet file an earlier writer made, and lists it only once written', async () => {
    const task = (await get('tasks/btc-x').expect(200)).body;
    const file = datasetPath(dataDir, 'btc-x').replace(/\.jsonl\.gz$/, '.parquet');
    const current = readFileSync(file);
    const { headers } = await get('tasks/btc-x/dataset?format=parquet').expect(200);
    writeFileSync(file, 'PAR1 as an earlier writer made it PAR1');
    await app.app
      .get(DataSource)
      .query(
        `UPDATE scraping_tasks SET parquet_version = NULL, parquet_bytes = 38, parquet_sha256 = $1 WHERE id = 'btc-x'`,
        ['0'.repeat(64)],
      );
    expect((await get('tasks/btc-x').expect(200)).body.dataset.parquet).toBeUndefined();
    app.app.get(Clock).advance(60_000);
    const writtenAt = Math.floor(app.app.get(Clock).now().getTime() / 1000) * 1000;
    const again = await download('tasks/btc-x/dataset?format=parquet').expect(200);
    expect(again.body).toEqual(current);
    expect(again.headers['x-content-sha256']).toBe(task.dataset.parquet.sha256);
    // Another file was recorded than the one written now: its Last-Modified is now, the same on
    // the next download (the time is recorded, not the file's mtime).
    expect(Date.parse(again.headers['last-modified'])).toBeGreaterThanOrEqual(writtenAt);
    expect(Date.parse(again.headers['last-modified'])).toBeGreaterThan(
      Date.parse(headers['last-modified']),
    );
    const next = await get('tasks/btc-x/dataset?format=parquet').expect(200);
    expect(next.headers['last-modified']).toBe(again.headers['last-modified']);
    await get('tasks/btc-x/dataset?format=parquet')
      .set('If-Modified-Since', headers['last-modified'])
      .expect(200);
    expect((await get('tasks/btc-x').expect(200)).body.dataset).toEqual(task.dataset);
  });

  /** The documented 503 of a dataset file not on this server, in JSON. */
  async function expectFileMissing(format: string): Promise<void> {
    const response = await get(`tasks/btc-x/dataset?format=${format}`).expect(503);
    expect(response.headers['content-type']).toMatch(/^application\/json/);
    expect(response.body).toEqual({
      detail: "The dataset file of task 'btc-x' is missing on this server",
      request_id: expect.any(String),
    });
  }

  it('answers 503 when the JSON lines file is missing on this server, in either format', async () => {
    const file = datasetPath(dataDir, 'btc-x');
    const bytes = readFileSync(file);
    unlinkSync(file);
    try {
      for (const format of ['jsonl', 'parquet']) {
        await expectFileMissing(format);
      }
    } finally {
      writeFileSync(file, bytes);
    }
  });

  /**
   * Runs `check` while btc-x records its two files in `directory` (same names), as a replica
   * whose DATA_DIR is mounted elsewhere recorded them; then restores what it recorded.
   */
  async function recordedIn(directory: string, check: () => Promise<void>): Promise<void> {
    const database = app.app.get(DataSource);
    const [recorded] = await database.query<{ dataset_file: string; parquet_file: string }[]>(
      `SELECT dataset_file, parquet_file FROM scraping_tasks WHERE id = 'btc-x'`,
    );
    const update = (datasetFile: string, parquetFile: string) =>
      database.query(
        `UPDATE scraping_tasks SET dataset_file = $1, parquet_file = $2 WHERE id = 'btc-x'`,
        [datasetFile, parquetFile],
      );
    await update(
      join(directory, basename(recorded.dataset_file)),
      join(directory, basename(recorded.parquet_file)),
    );
    try {
      await check();
    } finally {
      await update(recorded.dataset_file, recorded.parquet_file);
    }
  }

  // Another replica, its shared volume mounted at another path, or a DATA_DIR restored to a new
  // mount: the task records the compiler's directory, and the download read it there (a 200 from
  // a replica without the file, a 503 from one holding it; a review of two replicas' finding).
  it("serves a task's files by their names under this server's DATA_DIR, whatever directory the task recorded", async () => {
    const jsonl = datasetPath(dataDir, 'btc-x');
    const parquet = jsonl.replace(/\.jsonl\.gz$/, '.parquet');
    const task = (await get('tasks/btc-x').expect(200)).body;
    await recordedIn(join(tmpdir(), 'another-replicas-data', 'datasets'), async () => {
      expect((await download('tasks/btc-x/dataset').expect(200)).body).toEqual(readFileSync(jsonl));
      const served = await download('tasks/btc-x/dataset?format=parquet').expect(200);
      expect(served.body).toEqual(readFileSync(parquet));
      expect(served.headers['x-content-sha256']).toBe(task.dataset.parquet.sha256);
      // Served as recorded, not written again (which would record this server's path).
      const [row] = await app.app
        .get(DataSource)
        .query<{ parquet_file: string }[]>(
          `SELECT parquet_file FROM scraping_tasks WHERE id = 'btc-x'`,
        );
      expect(row.parquet_file).toBe(
        join(tmpdir(), 'another-replicas-data', 'datasets', basename(parquet)),
      );
    });
  });

  it('answers 503, and warns naming the path it tried, when the file is at the recorded path but not under this DATA_DIR', async () => {
    const jsonl = datasetPath(dataDir, 'btc-x');
    const elsewhere = mkdtempSync(join(tmpdir(), 'another-replicas-data-'));
    mkdirSync(join(elsewhere, 'datasets'));
    copyFileSync(jsonl, join(elsewhere, 'datasets', basename(jsonl)));
    renameSync(jsonl, `${jsonl}.away`);
    const warned = jest.spyOn(Logger.prototype, 'warn');
    try {
      await recordedIn(join(elsewhere, 'datasets'), () => expectFileMissing('jsonl'));
      expect(warned).toHaveBeenCalledWith(
        { task_id: 'btc-x' },
        `task btc-x: ${jsonl} is not on disk: answered as missing`,
      );
    } finally {
      warned.mockRestore();
      renameSync(`${jsonl}.away`, jsonl);
      rmSync(elsewhere, { recursive: true, force: true });
    }
    await download('tasks/btc-x/dataset').expect(200);
  });

  // Deleted after its size check (a cleanup, an operator), the file was opened by the read stream
  // only once the headers were set: answered 400 'Bad Request' in text/plain, or cut off.
  it('answers 503 in JSON when the file is deleted after its size check, in either format', async () => {
    const sizeOnDisk = datasetWriter.sizeOnDisk;
    for (const format of ['jsonl', 'parquet'] as const) {
      const jsonl = datasetPath(dataDir, 'btc-x');
      const file = format === 'jsonl' ? jsonl : jsonl.replace(/\.jsonl\.gz$/, '.parquet');
      const bytes = readFileSync(file);
      const deleting = jest
        .spyOn(datasetWriter, 'sizeOnDisk')
        .mockImplementation(async (checked) => {
          const size = await sizeOnDisk(checked);
          // At each check: the Parquet service's own writes the file again, the download's is last.
          if (checked === file && size !== undefined) unlinkSync(checked);
          return size;
        });
      try {
        await expectFileMissing(format);
      } finally {
        deleting.mockRestore();
        writeFileSync(file, bytes);
      }
      await download(`tasks/btc-x/dataset?format=${format}`).expect(200);
    }
  });

  // A client that has every byte it was promised (Content-Length) closes at once, as curl does
  // when it exits: often before the server has ended the response. Such a download was counted
  // and logged as unanswered (found by a README audit: 23 of 83 complete downloads).
  it('counts a download whose client closed on its last byte as answered', async () => {
    const route = { method: 'GET', route: '/api/v1/tasks/:id/dataset' };
    const before = await scrape(app);
    const answered = (text: string) =>
      sample(text, 'gateway_http_requests_total', { ...route, status: '200' }) ?? 0;
    const unanswered = (text: string) =>
      sample(text, 'gateway_http_requests_unanswered_total', route) ?? 0;
    const port = Number(new URL(app.url).port);
    const downloads = 100;
    for (let i = 0; i < downloads; i++)
      await fetchAndClose(port, 'btc-x', i % 2 === 0 ? 'jsonl' : 'parquet');
    await eventually(async () => {
      const after = await scrape(app);
      expect(answered(after) - answered(before)).toBe(downloads);
      expect(unanswered(after) - unanswered(before)).toBe(0);
    });
  });

  // Cut short in place while it was sent (a truncate, a restore written over it), the file just
  // ended early: its response was ended short of its Content-Length, as if complete, and the
  // client, on a kept-alive connection, waited for the missing bytes until the server's
  // keep-alive timeout (HTTP_KEEP_ALIVE_TIMEOUT_MS, 65 s) closed it (an audit's question).
  it('breaks the connection off, at once, when the file is cut short while it is sent', async () => {
    const file = datasetPath(dataDir, 'btc-x');
    const bytes = readFileSync(file);
    const database = app.app.get(DataSource);
    const record = (size: number) =>
      database.query(`UPDATE scraping_tasks SET dataset_bytes = $1 WHERE id = 'btc-x'`, [size]);
    // Far more than the sockets' buffers hold ahead of a client that stops reading: most of the
    // file is still to be read when it is cut.
    const large = Buffer.alloc(32 * 1024 * 1024, 1);
    writeFileSync(file, large);
    await record(large.length);
    const agent = new Agent({ keepAlive: true });
    const unanswered = (text: string) =>
      sample(text, 'gateway_http_requests_unanswered_total', {
        method: 'GET',
        route: '/api/v1/tasks/:id/dataset',
      }) ?? 0;
    const before = unanswered(await scrape(app));
    try {
      const outcome = await downloadCutShort(`${app.url}/api/v1/tasks/btc-x/dataset`, agent, () =>
        truncateSync(file, 1000),
      );
      expect(outcome).toEqual({
        status: 200,
        contentLength: large.length,
        received: expect.any(Number),
        complete: false,
        error: 'ECONNRESET',
      });
      expect(outcome.received).toBeLessThan(large.length);
      // The server's own account: not a complete 200.
      await eventually(async () => expect(unanswered(await scrape(app))).toBe(before + 1));
    } finally {
      agent.destroy();
      writeFileSync(file, bytes);
      await record(bytes.length);
    }
    await download('tasks/btc-x/dataset').expect(200);
  });

  it('refuses an unknown format with a 422 at ["query", "format"]', async () => {
    for (const format of ['csv', 'PARQUET', '']) {
      const response = await get(`tasks/btc-x/dataset?format=${format}`).expect(422);
      expect(response.body).toEqual({
        detail: [
          {
            type: 'enum',
            loc: ['query', 'format'],
            msg: "Input should be 'jsonl' or 'parquet'",
            ctx: { expected: "'jsonl' or 'parquet'" },
          },
        ],
        request_id: expect.any(String),
      });
    }
  });

  it('answers 409 before completion, 410 for a failed task and 404 for an unknown one, in JSON', async () => {
    const early = await get('tasks/still-active/dataset?format=parquet').expect(409);
    expect(early.headers['content-type']).toMatch(/^application\/json/);
    expect(early.body).toEqual({
      detail: "Task 'still-active' is active; its dataset is available once the task has completed",
      request_id: expect.any(String),
    });
    // Failed after its compile attempts: final, so not a 409 a client would wait out.
    await registerTask(app.app, '5ValidatorHotkeyForDatasets', 'gave-up', '#gaveup');
    await app.app
      .get(DataSource)
      .query(`UPDATE scraping_tasks SET state = 'failed', failure_reason = $2 WHERE id = $1`, [
        'gave-up',
        "ENOSPC: no space left on device, write 'gave-up.jsonl.gz.1a2b.partial'",
      ]);
    for (const format of ['jsonl', 'parquet']) {
      const failed = await get(`tasks/gave-up/dataset?format=${format}`).expect(410);
      expect(failed.body).toEqual({
        detail:
          "Task 'gave-up' failed and has no dataset: ENOSPC: no space left on device, write 'gave-up.jsonl.gz.1a2b.partial' (an operator may have it compiled again)",
        request_id: expect.any(String),
      });
    }
    const unknown = await get('tasks/nope/dataset?format=parquet').expect(404);
    expect(unknown.body).toEqual({
      detail: "Task 'nope' not found",
      request_id: expect.any(String),
    });
  });

  it('documents the format parameter and both media types of the download', async () => {
    const document = (await app.http.get('/openapi.json').expect(200)).body;
    const operation = document.paths['/api/v1/tasks/{id}/dataset'].get;
    expect(operation.parameters).toContainEqual(
      expect.objectContaining({
        name: 'format',
        in: 'query',
        required: false,
        schema: expect.objectContaining({ enum: ['jsonl', 'parquet'], default: 'jsonl' }),
      }),
    );
    expect(Object.keys(operation.responses['200'].content)).toEqual(['application/gzip', PARQUET]);
    expect(operation.responses['200'].headers).toHaveProperty('X-Content-SHA256');
    expect(operation.responses['200'].headers['Accept-Ranges'].schema).toEqual({
      type: 'string',
      enum: ['none'],
    });
    for (const status of ['404', '409', '422', '503'])
      expect(Object.keys(operation.responses[status].content)).toEqual(['application/json']);
    expect(document.components.schemas.TaskDataset.properties.parquet).toEqual(
      expect.objectContaining({ allOf: [{ $ref: '#/components/schemas/TaskDatasetParquet' }] }),
    );
  });

  it('writes counts no INT64 holds, stored by an earlier release, as null in both formats', async () => {
    await register('odd-counts', '#bitcoin', 'x');
    const lifecycle = app.app.get(TaskLifecycleService);
    await lifecycle.collectDue();
    const database = app.app.get(DataSource);
    const [fraction, huge] = await database.query<{ uri: string }[]>(
      `SELECT uri FROM task_items WHERE task_id = 'odd-counts' ORDER BY uri LIMIT 2`,
    );
    const setCount = (uri: string, path: string, value: string) =>
      database.query(
        `UPDATE task_items SET item = jsonb_set(item, $2::text[], $3::jsonb) WHERE task_id = 'odd-counts' AND uri = $1`,
        [uri, path, value],
      );
    await setCount(fraction.uri, '{tweet,like_count}', '1.5');
    await setCount(huge.uri, '{user,followers_count}', '9223372036854775808');
    await database.query(
      `UPDATE scraping_tasks SET expires_at = registered_at WHERE id = 'odd-counts'`,
    );
    expect(await lifecycle.compileExpired()).toBe(1);

    const task = (await get('tasks/odd-counts').expect(200)).body;
    expect(task.dataset).toHaveProperty('parquet');
    const { items, read } = await bothFormats('odd-counts');
    const byUri = new Map(items.map((item) => [item.uri, item as XItem]));
    expect(byUri.get(fraction.uri)?.tweet.like_count).toBeNull();
    expect(byUri.get(huge.uri)?.user.followers_count).toBeNull();
    expect(read.rows).toEqual(expectedRows(items, read.columns));
  });

  // The task's items are unique by canonical uri, which keeps the record's spelling (an X
  // handle's case, a Reddit slug): two collections that got one post from miners spelling it
  // otherwise stored it twice, and both copies were rows of the dataset (an audit's finding).
  it.each([
    [
      'x' as const,
      (item: DataItem) => {
        const post = item as XItem;
        const username = post.user.username.toUpperCase();
        return {
          ...post,
          uri: `https://x.com/${username}/status/${post.tweet.id}`,
          user: { ...post.user, username },
        };
      },
    ],
    [
      'reddit' as const,
      (item: DataItem) => {
        const post = item as RedditItem;
        const [, , community, , id] = new URL(post.uri).pathname.split('/');
        const uri = `https://www.reddit.com/r/${community}/comments/${id}/`;
        return { ...post, uri, url: uri };
      },
    ],
  ])(
    'writes each %s post once, though collections stored it under two spellings of its uri',
    async (platform, respelled) => {
      const id = `respelled-${platform}`;
      await register(id, platform === 'x' ? '#bitcoin' : redditLabel, platform);
      const lifecycle = app.app.get(TaskLifecycleService);
      await lifecycle.collectDue();
      const database = app.app.get(DataSource);
      const [{ item }] = await database.query<{ item: DataItem }[]>(
        // A post (a Reddit post has its slug), an X one by a handle with a lower-case letter.
        `SELECT item FROM task_items WHERE task_id = $1 AND item->>'dataType' IS DISTINCT FROM 'comment'
           AND coalesce(item->'user'->>'username', 'a') ~ '[a-z]' ORDER BY uri LIMIT 1`,
        [id],
      );
      const copy = respelled(item);
      expect(copy.uri).not.toBe(item.uri);
      // As a later collection stores it: through the same uri check, into a row of its own.
      const repository = app.app.get(TaskLifecycleRepository);
      // Collected up to now: the task, expired below, awaits no final collection.
      const now = app.app.get(Clock).now();
      const progress = { head: now, cursor: null, floor: null, backNext: false };
      expect(await repository.addItems(id, [copy], progress, now)).toEqual({
        added: 1,
        outsideWindow: 0,
      });
      await database.query(`UPDATE scraping_tasks SET expires_at = registered_at WHERE id = $1`, [
        id,
      ]);
      expect(await lifecycle.compileExpired()).toBe(1);

      const task = (await get(`tasks/${id}`).expect(200)).body;
      const { items, read } = await bothFormats(id);
      const posts = items.map(itemKey);
      expect(posts).toEqual([...new Set(posts)]);
      expect(posts).toContain(itemKey(item));
      expect(task.dataset.rows).toBe(items.length);
      expect(read.rows).toEqual(expectedRows(items, read.columns));
    },
  );

  // What the devnet's corpus never holds: astral characters and every Unicode line break, a
  // text of 200,000 characters, counts past 2^31 and up to 2^53 - 1, a negative score, a post
  // from before 1970 and one at a millisecond, lists empty and null.
  it('keeps awkward values the same in both formats, from the store through the download', async () => {
    const text = `🚀 𝕏 ｢full width｣ \u2028 \u2029 \u0085 "quoted"\r\n\ttab ${'long '.repeat(40_000)}`;
    const awkward = (
      id: string,
      datetime: string,
      tweet: Partial<XItem['tweet']>,
      media: string[] | null,
    ): XItem => ({
      text,
      datetime,
      uri: `https://x.com/Awk_ward/status/${id}`,
      source: 'X',
      label: '#bitcoin',
      content_size_bytes: 2 ** 31 + 7,
      tweet: {
        id,
        like_count: 2 ** 31 + 1,
        retweet_count: Number.MAX_SAFE_INTEGER,
        reply_count: 0,
        quote_count: -1,
        view_count: 2 ** 40,
        bookmark_count: null,
        language: 'und',
        hashtags: [],
        is_retweet: false,
        is_reply: null,
        is_quote: true,
        conversation_id: id,
        in_reply_to_user_id: null,
        in_reply_to_username: null,
        quoted_tweet_id: '1999999999999999999',
        ...tweet,
      },
      user: {
        id: '18446744073709551615',
        username: 'Awk_ward',
        display_name: '👩‍👩‍👧 Ω',
        verified: false,
        user_blue_verified: true,
        followers_count: 3_000_000_000,
        following_count: 0,
        user_description: '\u2028',
        user_location: '',
        profile_image_url: null,
        cover_picture_url: null,
      },
      media,
      content: text,
    });
    // Oldest first, as the dataset lists them.
    const posts = [
      awkward('1900000000000000012', '1901-06-15T12:34:56.000Z', {}, null),
      awkward(
        '1900000000000000011',
        '1969-12-31T23:59:59.999Z',
        { hashtags: ['#Bitcoin', '#🚀'] },
        [],
      ),
      awkward('1900000000000000013', '2026-11-01T10:20:30.001Z', { like_count: null }, [
        'https://pbs.twimg.com/media/a.jpg',
      ]),
    ];
    await register('awkward-x', '#bitcoin', 'x');
    // As a collection up to now leaves them: the task, expired below, awaits no final collection.
    const now = app.app.get(Clock).now();
    const progress = { head: now, cursor: null, floor: null, backNext: false };
    await app.app.get(TaskLifecycleRepository).addItems('awkward-x', posts, progress, now);
    const database = app.app.get(DataSource);
    await database.query(
      `UPDATE scraping_tasks SET expires_at = registered_at WHERE id = 'awkward-x'`,
    );
    expect(await app.app.get(TaskLifecycleService).compileExpired()).toBe(1);

    const { items, read } = await bothFormats('awkward-x');
    expect(items).toEqual(posts.map(answeredItem));
    // Dates as Python's isoformat() writes them: a fraction of six digits only when there is one.
    expect(items.map((item) => item.datetime).sort()).toEqual([
      '1901-06-15T12:34:56+00:00',
      '1969-12-31T23:59:59.999000+00:00',
      '2026-11-01T10:20:30.001000+00:00',
    ]);
    expect(read.rows).toEqual(expectedRows(items, read.columns));
    // Read as BIGINT, not through a double: the largest safe count is exact.
    const [exact] = await queryParquet(
      join(dataDir, 'downloaded-awkward-x.parquet'),
      'SELECT CAST(max(retweet_count) AS VARCHAR) AS retweets, min(datetime) AS first FROM read_parquet($file)',
    );
    expect(exact).toEqual({ retweets: '9007199254740991', first: '1901-06-15T12:34:56.000Z' });
  });

  it('answers 503 when the Parquet file cannot be written, and tries again only an hour later', async () => {
    const task = (await get('tasks/odd-counts').expect(200)).body;
    const path = datasetPath(dataDir, 'odd-counts');
    const parquetFile = path.replace(/\.jsonl\.gz$/, '.parquet');
    // As a task completed before Parquet existed, whose JSON lines file cannot be converted.
    unlinkSync(parquetFile);
    await app.app
      .get(DataSource)
      .query(
        `UPDATE scraping_tasks SET parquet_file = NULL, parquet_bytes = NULL, parquet_sha256 = NULL WHERE id = 'odd-counts'`,
      );
    const jsonl = readFileSync(path);
    // As large as the recorded file: one of another size is answered as missing.
    const broken = gzipSync('not a JSON line\n');
    writeFileSync(path, Buffer.concat([broken, Buffer.alloc(jsonl.length - broken.length)]));
    const unavailable = {
      detail:
        "The Parquet file of task 'odd-counts' could not be written on this server; it is tried " +
        'again an hour after the failure. The JSON lines dataset (format=jsonl) holds the same rows',
      request_id: expect.any(String),
    };
    try {
      const failed = await get('tasks/odd-counts/dataset?format=parquet').expect(503);
      expect(failed.headers['content-type']).toMatch(/^application\/json/);
      expect(failed.body).toEqual(unavailable);
    } finally {
      writeFileSync(path, jsonl);
    }
    // Within the hour the failure stands, though converting would now succeed.
    const again = await get('tasks/odd-counts/dataset?format=parquet').expect(503);
    expect(again.body).toEqual(unavailable);
    expect(existsSync(parquetFile)).toBe(false);

    app.app.get(Clock).advance(PARQUET_RETRY_MS);
    const written = await download('tasks/odd-counts/dataset?format=parquet').expect(200);
    expect(written.headers['x-content-sha256']).toBe(task.dataset.parquet.sha256);
  });
});

/**
 * Downloads a dataset on a connection of its own and destroys the socket the moment the body is
 * complete (Content-Length bytes), as a client that exits then does.
 */
async function fetchAndClose(port: number, id: string, format: 'jsonl' | 'parquet'): Promise<void> {
  const socket = connect(port, '127.0.0.1');
  await once(socket, 'connect');
  socket.write(
    `GET /api/v1/tasks/${id}/dataset?format=${format} HTTP/1.1\r\nHost: localhost\r\n` +
      `X-API-Key: ${TEST_MASTER_KEY}\r\n\r\n`,
  );
  let received = Buffer.alloc(0);
  for await (const chunk of socket) {
    received = Buffer.concat([received, chunk as Buffer]);
    const headerEnd = received.indexOf('\r\n\r\n');
    if (headerEnd < 0) continue;
    const head = received.subarray(0, headerEnd).toString();
    const length = Number(/content-length: (\d+)/i.exec(head)?.[1]);
    if (received.length - headerEnd - 4 >= length) break;
  }
  socket.destroy();
}

/**
 * Downloads a dataset on a kept-alive connection, calling `cut` once the headers have come, the
 * client not reading meanwhile. Settles when the response is closed, or after 10 s (`hung`): the
 * connection left open, the client waiting for bytes that never come.
 */
async function downloadCutShort(url: string, agent: Agent, cut: () => void) {
  const response = await new Promise<IncomingMessage>((resolve, reject) =>
    httpGet(url, { agent, headers: { 'X-API-Key': TEST_MASTER_KEY } }, resolve).on('error', reject),
  );
  response.pause();
  cut();
  let received = 0;
  let error: string | undefined;
  response.on('data', (chunk: Buffer) => (received += chunk.length));
  response.on('error', (failure: NodeJS.ErrnoException) => (error = failure.code));
  response.resume();
  // Not `once`, which rejects at the 'error' a broken-off response emits before it closes.
  const closed = new Promise<'closed'>((resolve) => response.on('close', () => resolve('closed')));
  let timer: NodeJS.Timeout | undefined;
  const hung = new Promise<'hung'>(
    (resolve) => (timer = setTimeout(() => resolve('hung'), 10_000)),
  );
  const settled = await Promise.race([closed, hung]);
  clearTimeout(timer);
  if (settled === 'hung') response.destroy();
  return {
    status: response.statusCode,
    contentLength: Number(response.headers['content-length']),
    received,
    complete: settled === 'hung' ? 'hung' : response.complete,
    error,
  };
}

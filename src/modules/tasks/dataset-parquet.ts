import { createReadStream, WriteStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { setImmediate } from 'node:timers/promises';
import { createGunzip } from 'node:zlib';
import type { FieldDefinition, SchemaDefinition } from '@dsnp/parquetjs';
import { loadWhenUsed } from '../../common/load-when-used';
import { Source } from '../../common/source';
import { RedditItem, XItem } from '../../network/protocol';
import { toSourceName } from '../../network/sn13/sources';
import { writeFileAtomically, WrittenFile } from './atomic-file';

/*
 * A task's dataset as Parquet: one row per item, the item's fields as flat, typed columns (nested
 * objects' fields joined with `_`: `user.username` is `user_username`), lists as Parquet LIST
 * columns, datetimes as UTC timestamps (milliseconds, as items carry them). A task collects one
 * platform, so each file has that platform's columns only. The columns are listed in the README
 * ("Scraping tasks"); docs/decisions.md says why this writer and these types.
 */

// Gzip: every Parquet reader reads it, and the file comes out no larger than the gzip JSON lines
// (Snappy's is about 60 % larger; `npm run bench:datasets`).
const text = (optional = false): FieldDefinition => ({
  type: 'UTF8',
  optional,
  compression: 'GZIP',
});
const integer = (): FieldDefinition => ({ type: 'INT64', optional: true, compression: 'GZIP' });
const flag = (): FieldDefinition => ({ type: 'BOOLEAN', optional: true, compression: 'GZIP' });
const timestamp = (): FieldDefinition => ({ type: 'TIMESTAMP_MILLIS', compression: 'GZIP' });
/** A LIST in the standard three-level layout (`<name>.list.element`), which readers map to lists. */
const list = (element: FieldDefinition): FieldDefinition => ({
  type: 'LIST',
  fields: { list: { repeated: true, fields: { element } } },
});

const COMMON_COLUMNS: SchemaDefinition = {
  uri: text(),
  datetime: timestamp(),
  source: text(),
  label: text(true),
  content: text(),
};

const X_COLUMNS: SchemaDefinition = {
  ...COMMON_COLUMNS,
  user_username: text(),
  user_display_name: text(true),
  user_id: text(true),
  user_verified: flag(),
  user_followers_count: integer(),
  user_following_count: integer(),
  tweet_id: text(),
  tweet_like_count: integer(),
  tweet_retweet_count: integer(),
  tweet_reply_count: integer(),
  tweet_quote_count: integer(),
  tweet_hashtags: list(text()),
  tweet_is_retweet: flag(),
  tweet_is_reply: flag(),
  tweet_is_quote: flag(),
  tweet_conversation_id: text(true),
  media: list({ fields: { url: text(), type: text() } }),
};

const REDDIT_COLUMNS: SchemaDefinition = {
  ...COMMON_COLUMNS,
  id: text(),
  url: text(),
  username: text(),
  communityName: text(),
  body: text(),
  title: text(true),
  createdAt: timestamp(),
  dataType: text(),
  parentId: text(true),
};

/*
 * The writer encodes and compresses a row group synchronously, and the API shares the process:
 * row groups of 1000 rows, and a turn of the event loop every 100 rows, keep the stalls it
 * causes to requests short (`npm run bench:datasets` prints them).
 */
const ROW_GROUP_SIZE = 1000;
const YIELD_EVERY_ROWS = 100;

type ParquetRow = Record<string, unknown>;

function listOf<T>(values: readonly T[]): { list: { element: T }[] } {
  return { list: values.map((element) => ({ element })) };
}

function xRow(item: XItem): ParquetRow {
  const { user, tweet } = item;
  return {
    uri: item.uri,
    datetime: new Date(item.datetime),
    source: item.source,
    label: item.label,
    content: item.content,
    user_username: user.username,
    user_display_name: user.display_name,
    user_id: user.id,
    user_verified: user.verified,
    user_followers_count: user.followers_count,
    user_following_count: user.following_count,
    tweet_id: tweet.id,
    tweet_like_count: tweet.like_count,
    tweet_retweet_count: tweet.retweet_count,
    tweet_reply_count: tweet.reply_count,
    tweet_quote_count: tweet.quote_count,
    tweet_hashtags: listOf(tweet.hashtags),
    tweet_is_retweet: tweet.is_retweet,
    tweet_is_reply: tweet.is_reply,
    tweet_is_quote: tweet.is_quote,
    tweet_conversation_id: tweet.conversation_id,
    media: listOf(item.media.map(({ url, type }) => ({ url, type }))),
  };
}

function redditRow(item: RedditItem): ParquetRow {
  return {
    uri: item.uri,
    datetime: new Date(item.datetime),
    source: item.source,
    label: item.label,
    content: item.content,
    id: item.id,
    url: item.url,
    username: item.username,
    communityName: item.communityName,
    body: item.body,
    // Posts have no parent and comments no title: absent (or null) in JSON, null here.
    title: item.title ?? null,
    createdAt: new Date(item.createdAt),
    dataType: item.dataType,
    parentId: item.parentId ?? null,
  };
}

const COLUMNS = { x: X_COLUMNS, reddit: REDDIT_COLUMNS } as const;

/**
 * Writes the rows of a task's JSON lines dataset (`jsonlPath`, as compiled) to `path` as
 * Parquet, in the same order, through `writeFileAtomically`. Built from the JSON lines file, not
 * the stored items, so both files hold the same rows by construction, and a task compiled before
 * Parquet existed gets its file from what it published. The writer is deterministic: two replicas
 * converting the same file write the same bytes.
 */
export async function writeParquet(
  platform: Source,
  jsonlPath: string,
  path: string,
): Promise<WrittenFile & { rows: number }> {
  const columns = COLUMNS[platform];
  const source = toSourceName(platform);
  // Loaded here: most processes never write a dataset and should not carry the library.
  const { ParquetSchema, ParquetWriter } =
    loadWhenUsed<typeof import('@dsnp/parquetjs')>('@dsnp/parquetjs');
  const schema = new ParquetSchema(columns);
  let rows = 0;
  const written = await writeFileAtomically(path, async (output) => {
    // Typed as an fs.WriteStream, the output is only ever given buffers and ended (with callbacks).
    const sink = output as unknown as WriteStream;
    // Data page v1: the widest-read layout (v2 pages are not read by every tool yet).
    const writer = await ParquetWriter.openStream(schema, sink, {
      useDataPageV2: false,
      rowGroupSize: ROW_GROUP_SIZE,
    });
    const file = createReadStream(jsonlPath);
    const input = file.pipe(createGunzip());
    file.once('error', (error) => input.destroy(error));
    // JSON.stringify escapes every line break inside a value: one line is one item.
    const lines = createInterface({ input, crlfDelay: Infinity });
    try {
      for await (const line of lines) {
        if (line === '') continue;
        const item = JSON.parse(line) as XItem | RedditItem;
        if (item.source !== source)
          throw new Error(`row ${rows + 1} is a ${item.source} item in a ${source} dataset`);
        await writer.appendRow(item.source === 'X' ? xRow(item) : redditRow(item));
        rows++;
        if (rows % YIELD_EVERY_ROWS === 0) await setImmediate();
      }
    } finally {
      // Closing the lines does not close the file they were read from.
      input.destroy();
      file.destroy();
    }
    await writer.close();
  });
  return { ...written, rows };
}

/** Where a dataset's Parquet file lives: beside its JSON lines file. */
export function parquetPathBeside(jsonlPath: string): string {
  return `${jsonlPath.replace(/\.jsonl\.gz$/, '')}.parquet`;
}

import type { WriteStream } from 'node:fs';
import { Writable } from 'node:stream';
import type { FieldDefinition, SchemaDefinition } from '@dsnp/parquetjs';
import { loadWhenUsed } from '../../common/load-when-used';
import { Source } from '../../common/source';
import { currentItemShape, StoredItemShape } from '../../network/legacy-items';
import { RedditItem, XItem } from '../../network/protocol';
import { xContentFields } from '../../network/x-content';
import { toSourceName } from '../../network/sources';
import { datasetLines } from './dataset-lines';

/*
 * A task's dataset as Parquet, in the columns of the subnet's own Parquet datasets: one row per
 * item, flat, named as the miners' stored records name their fields (`username`, `text`,
 * `tweet_hashtags`, `user_followers_count`…; Reddit's `communityName`, `createdAt`…) plus
 * `uri`, `label` and `datetime`, so a query written for those files runs on ours. Lists are
 * Parquet LIST columns, datetimes UTC timestamps (milliseconds, as items carry them). A task
 * collects one platform, so each file has that platform's columns only. The README ("Scraping
 * tasks") lists them. Why this writer: docs/decisions.md, "Parquet library"; why these types:
 * docs/decisions.md, "Parquet datasets".
 */

// Gzip: every Parquet reader reads it, and the file comes out no larger than the gzip JSON lines
// (Snappy's is about 60 % larger; `npm run bench:datasets`).
// Text columns carry no min/max statistics: the writer orders strings as JavaScript does (UTF-16
// code units), readers as UTF-8 bytes, and the two disagree between astral characters (emoji)
// and U+E000..U+FFFF (full-width forms, U+FFFD), so a reader trusting them skipped row groups
// holding the very value a query asked for (DuckDB found no '🚀…' text beside a '｢…' one).
const text = (optional = false): FieldDefinition => ({
  type: 'UTF8',
  optional,
  compression: 'GZIP',
  statistics: false,
});
const integer = (): FieldDefinition => ({ type: 'INT64', optional: true, compression: 'GZIP' });
const double = (): FieldDefinition => ({ type: 'DOUBLE', optional: true, compression: 'GZIP' });
const flag = (): FieldDefinition => ({ type: 'BOOLEAN', optional: true, compression: 'GZIP' });
const timestamp = (): FieldDefinition => ({ type: 'TIMESTAMP_MILLIS', compression: 'GZIP' });
/**
 * A LIST in the standard three-level layout (`<name>.list.element`), which readers map to lists.
 */
const list = (element: FieldDefinition, optional = false): FieldDefinition => ({
  type: 'LIST',
  optional,
  fields: { list: { repeated: true, fields: { element } } },
});

/** The columns every row has before its record's fields. */
type EntityColumn = 'uri' | 'label' | 'datetime';
/**
 * An X row's columns are the record's fields (`xContentFields`): typed so, a field added there
 * and not here (or the reverse) fails the type check instead of vanishing from the files.
 */
type XColumn = EntityColumn | keyof ReturnType<typeof xContentFields>;

/** `XContent`'s fields, in the model's order, after the entity's `uri`, `label` and `datetime`. */
const X_COLUMNS: Record<XColumn, FieldDefinition> = {
  uri: text(),
  label: text(true),
  datetime: timestamp(),
  username: text(),
  text: text(),
  tweet_hashtags: list(text()),
  timestamp: timestamp(),
  url: text(),
  media: list(text(), true),
  user_id: text(true),
  user_display_name: text(true),
  user_verified: flag(),
  tweet_id: text(),
  is_reply: flag(),
  is_quote: flag(),
  conversation_id: text(true),
  in_reply_to_user_id: text(true),
  language: text(true),
  in_reply_to_username: text(true),
  quoted_tweet_id: text(true),
  like_count: integer(),
  retweet_count: integer(),
  reply_count: integer(),
  quote_count: integer(),
  view_count: integer(),
  bookmark_count: integer(),
  user_blue_verified: flag(),
  user_description: text(true),
  user_location: text(true),
  profile_image_url: text(true),
  cover_picture_url: text(true),
  user_followers_count: integer(),
  user_following_count: integer(),
  // Not an XContent field; scrapers that record it store it under this name.
  is_retweet: flag(),
};

/** `RedditContent`'s fields by alias, after the entity's `uri`, `label` and `datetime`. */
const REDDIT_COLUMNS = {
  uri: text(),
  label: text(true),
  datetime: timestamp(),
  id: text(),
  url: text(),
  username: text(),
  communityName: text(),
  body: text(),
  createdAt: timestamp(),
  dataType: text(),
  title: text(true),
  parentId: text(true),
  media: list(text(), true),
  is_nsfw: flag(),
  score: integer(),
  upvote_ratio: double(),
  num_comments: integer(),
} satisfies SchemaDefinition;
type RedditColumn = keyof typeof REDDIT_COLUMNS;

/*
 * The writer holds a row group in memory and encodes it at once: row groups of at most 1000 rows
 * and about ROW_GROUP_CHARS characters of JSON bound that memory (and, when the writer ran on the
 * API's event loop, bounded its stalls). Items' text has no limit below the miners' response
 * cap, so a count alone let one group hold hundreds of megabytes. A group closes with the row
 * that reaches the budget; one item larger than it cannot be split and is encoded at once. Why
 * this budget: docs/decisions.md, "Parquet too".
 */
const ROW_GROUP_SIZE = 1000;
export const ROW_GROUP_CHARS = 2_000_000;

function listOf<T>(values: readonly T[]): { list: { element: T }[] } {
  return { list: values.map((element) => ({ element })) };
}

/** Records keep the post's time to the minute (miners round it); `datetime` keeps the second. */
function toMinute(iso: string): Date {
  const date = new Date(iso);
  date.setUTCSeconds(0, 0);
  return date;
}

function xRow(item: XItem): Record<XColumn, unknown> {
  return {
    uri: item.uri,
    label: item.label,
    datetime: new Date(item.datetime),
    ...xContentFields(item, toMinute(item.datetime)),
    tweet_hashtags: listOf(item.tweet.hashtags),
    media: item.media === null ? null : listOf(item.media),
  };
}

function redditRow(item: RedditItem): Record<RedditColumn, unknown> {
  return {
    uri: item.uri,
    label: item.label,
    datetime: new Date(item.datetime),
    id: item.id,
    url: item.url,
    username: item.username,
    communityName: item.communityName,
    body: item.body,
    createdAt: new Date(item.createdAt),
    dataType: item.dataType,
    title: item.title,
    parentId: item.parentId,
    media: item.media === null ? null : listOf(item.media),
    is_nsfw: item.is_nsfw,
    score: item.score,
    upvote_ratio: item.upvote_ratio,
    num_comments: item.num_comments,
  };
}

const COLUMNS = { x: X_COLUMNS, reddit: REDDIT_COLUMNS } as const;

/**
 * Encodes the rows of a task's JSON lines dataset (`jsonlPath`, as compiled) as Parquet into
 * `output`, in the same order, with `metadata` as the file's key-value metadata, and ends
 * `output`; resolves to the number of rows. Deterministic: the same file gives the same bytes.
 * Runs in a worker thread (parquet-worker.ts; writeParquet), as it takes seconds of CPU per
 * 100,000 rows, and the file's footer is encoded in one go.
 */
export async function encodeParquet(
  platform: Source,
  jsonlPath: string,
  output: Writable,
  metadata: Readonly<Record<string, string>>,
): Promise<number> {
  const source = toSourceName(platform);
  // Loaded here: the module's columns are also read where the library is not needed.
  const { ParquetSchema, ParquetWriter } =
    loadWhenUsed<typeof import('@dsnp/parquetjs')>('@dsnp/parquetjs');
  const schema = new ParquetSchema(COLUMNS[platform]);
  // Typed as an fs.WriteStream, the output is only ever given buffers and ended (with callbacks).
  const sink = output as unknown as WriteStream;
  // Data page v1: the widest-read layout (v2 pages are not read by every tool yet).
  const writer = await ParquetWriter.openStream(schema, sink, {
    useDataPageV2: false,
    rowGroupSize: ROW_GROUP_SIZE,
  });
  let rows = 0;
  // The current row group's rows and characters (its items' JSON lines: the text they carry).
  let groupRows = 0;
  let groupChars = 0;
  for await (const line of datasetLines(jsonlPath)) {
    // A file compiled by an earlier release holds the earlier item shapes.
    const item = currentItemShape(JSON.parse(line) as StoredItemShape);
    if (item.source !== source)
      throw new Error(`row ${rows + 1} is a ${item.source} item in a ${source} dataset`);
    groupRows++;
    groupChars += line.length;
    // The writer closes a group when it holds rowGroupSize rows: lowered to this row's count,
    // the append closes it now.
    const closesGroup = groupRows >= ROW_GROUP_SIZE || groupChars >= ROW_GROUP_CHARS;
    if (closesGroup) writer.setRowGroupSize(groupRows);
    await writer.appendRow(item.source === 'X' ? xRow(item) : redditRow(item));
    rows++;
    if (closesGroup) {
      writer.setRowGroupSize(ROW_GROUP_SIZE);
      groupRows = 0;
      groupChars = 0;
    }
  }
  for (const [key, value] of Object.entries(metadata)) writer.setMetadata(key, value);
  await writer.close();
  return rows;
}

import { DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';

/** A Parquet file as an independent reader (DuckDB) sees it: column types and rows. */
export interface ReadParquet {
  /** Column name → DuckDB type, in file order (`TIMESTAMP`, `VARCHAR[]`, …). */
  columns: Record<string, string>;
  /** Values made comparable with JSON: timestamps as ISO strings, BIGINTs as numbers. */
  rows: Record<string, unknown>[];
}

export async function readParquet(file: string): Promise<ReadParquet> {
  return withDuckDb(async (connection) => {
    const described = await connection.runAndReadAll('DESCRIBE SELECT * FROM read_parquet($file)', {
      file,
    });
    const columns = Object.fromEntries(
      described
        .getRowObjectsJson()
        .map((column) => [column.column_name as string, column.column_type as string]),
    );
    const read = await connection.runAndReadAll('SELECT * FROM read_parquet($file)', { file });
    const rows = read.getRowObjectsJS().map((row) => plain(row) as Record<string, unknown>);
    return { columns, rows };
  });
}

/** A Parquet file's key-value metadata as DuckDB reads it (`parquet_kv_metadata`). */
export async function readParquetMetadata(file: string): Promise<Record<string, string>> {
  return withDuckDb(async (connection) => {
    const read = await connection.runAndReadAll(
      'SELECT decode(key) AS key, decode(value) AS value FROM parquet_kv_metadata($file)',
      { file },
    );
    return Object.fromEntries(
      read.getRowObjectsJson().map((row) => [row.key as string, row.value as string]),
    );
  });
}

/** A connection to an in-memory DuckDB for `use`, closed after. */
async function withDuckDb<T>(use: (connection: DuckDBConnection) => Promise<T>): Promise<T> {
  const instance = await DuckDBInstance.create(':memory:');
  const connection = await instance.connect();
  try {
    return await use(connection);
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
}

/**
 * What DuckDB answers to `sql` over the file (named `$file` in it), filters pushed down to the
 * file's column statistics as a data team's queries are.
 */
export async function queryParquet(
  file: string,
  sql: string,
  parameters: Record<string, string> = {},
): Promise<Record<string, unknown>[]> {
  return withDuckDb(async (connection) => {
    const read = await connection.runAndReadAll(sql, { file, ...parameters });
    return read.getRowObjectsJS().map((row) => plain(row) as Record<string, unknown>);
  });
}

function plain(value: unknown): unknown {
  if (value instanceof Date) return value.toISOString();
  if (typeof value === 'bigint') return Number(value);
  if (Array.isArray(value)) return value.map(plain);
  if (value !== null && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, plain(inner)]));
  return value;
}

type ItemJson = Record<string, unknown>;
type Column = string | ((item: ItemJson) => unknown);

/** Where an item keeps a column's value: a path (`user.username`) or a function. */
const TO_MINUTE: Column = (item) => {
  const date = new Date(item.datetime as string);
  date.setUTCSeconds(0, 0);
  return date.toISOString();
};

/**
 * The columns of the subnet's own Parquet datasets (the miners' record field names, plus `uri`,
 * `label` and `datetime`), written out plainly and independently of the writer, with where an
 * item of the JSON lines dataset holds each value.
 */
const RECORD_COLUMNS: Record<'X' | 'REDDIT', Record<string, Column>> = {
  X: {
    uri: 'uri',
    label: 'label',
    datetime: 'datetime',
    username: 'user.username',
    text: 'text',
    tweet_hashtags: 'tweet.hashtags',
    // Records keep the time to the minute.
    timestamp: TO_MINUTE,
    url: 'uri',
    media: 'media',
    user_id: 'user.id',
    user_display_name: 'user.display_name',
    user_verified: 'user.verified',
    tweet_id: 'tweet.id',
    is_reply: 'tweet.is_reply',
    is_quote: 'tweet.is_quote',
    conversation_id: 'tweet.conversation_id',
    in_reply_to_user_id: 'tweet.in_reply_to_user_id',
    language: 'tweet.language',
    in_reply_to_username: 'tweet.in_reply_to_username',
    quoted_tweet_id: 'tweet.quoted_tweet_id',
    like_count: 'tweet.like_count',
    retweet_count: 'tweet.retweet_count',
    reply_count: 'tweet.reply_count',
    quote_count: 'tweet.quote_count',
    view_count: 'tweet.view_count',
    bookmark_count: 'tweet.bookmark_count',
    user_blue_verified: 'user.user_blue_verified',
    user_description: 'user.user_description',
    user_location: 'user.user_location',
    profile_image_url: 'user.profile_image_url',
    cover_picture_url: 'user.cover_picture_url',
    user_followers_count: 'user.followers_count',
    user_following_count: 'user.following_count',
    is_retweet: 'tweet.is_retweet',
  },
  REDDIT: Object.fromEntries(
    [
      'uri',
      'label',
      'datetime',
      'id',
      'url',
      'username',
      'communityName',
      'body',
      'createdAt',
      'dataType',
      'title',
      'parentId',
      'media',
      'is_nsfw',
      'score',
      'upvote_ratio',
      'num_comments',
    ].map((name) => [name, name]),
  ),
};

/**
 * Item fields the subnet's datasets have no column for: the file is of one source, and the rest are
 * the API's.
 */
const NOT_IN_DATASETS = new Set(['source', 'content', 'content_size_bytes']);

function valueAt(item: ItemJson, column: Column): unknown {
  if (typeof column === 'function') return column(item);
  let value: unknown = item;
  for (const key of column.split('.')) value = (value as ItemJson | undefined)?.[key];
  return value;
}

/**
 * A JSON lines value as DuckDB's reading of its column gives it (plain): a date-time, written
 * `…+00:00` in the lines (the hosted API's form), as the instant's `toISOString()`.
 */
function asRead(type: string, value: unknown): unknown {
  return type.startsWith('TIMESTAMP') && typeof value === 'string'
    ? new Date(value).toISOString()
    : value;
}

/** Paths of every value of the item (`user.username`), lists as values. */
function leafPaths(item: ItemJson, prefix = ''): string[] {
  return Object.entries(item).flatMap(([key, value]) =>
    value !== null && typeof value === 'object' && !Array.isArray(value)
      ? leafPaths(value as ItemJson, `${prefix}${key}.`)
      : [`${prefix}${key}`],
  );
}

/**
 * The JSON lines items as the rows the Parquet file should hold, column by column: the file must
 * have exactly the subnet's columns for the source, and every field of every item must be read
 * by one of them (nothing dropped) unless the subnet's datasets have no place for it.
 */
export function expectedRows(
  items: readonly object[],
  columns: Record<string, string>,
): Record<string, unknown>[] {
  return items.map((value) => {
    const item = value as ItemJson;
    const table = RECORD_COLUMNS[item.source as 'X' | 'REDDIT'];
    const names = Object.keys(columns);
    if (names.join() !== Object.keys(table).join())
      throw new Error(`columns ${names.join()} are not ${Object.keys(table).join()}`);
    const read = new Set(Object.values(table).filter((column) => typeof column === 'string'));
    const dropped = leafPaths(item).filter((path) => !read.has(path) && !NOT_IN_DATASETS.has(path));
    if (dropped.length > 0) throw new Error(`fields without a column: ${dropped.join(', ')}`);
    return Object.fromEntries(
      names.map((name) => [name, asRead(columns[name], valueAt(item, table[name]) ?? null)]),
    );
  });
}

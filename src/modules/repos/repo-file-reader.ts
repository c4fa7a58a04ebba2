import { open } from 'node:fs/promises';
import { extname } from 'node:path';
import type { ParquetReader } from '@dsnp/parquetjs';
import { loadWhenUsed } from '../../common/load-when-used';
import { textLines } from '../../common/text-lines';

/** The column (CSV, Parquet) or field (JSON lines) holding a miner's repository name. */
export const REPO_NAME_COLUMN = 'repo_name';

export type RepoFileFormat = 'parquet' | 'csv' | 'jsonl';

const FORMATS_BY_EXTENSION: Record<string, RepoFileFormat> = {
  '.parquet': 'parquet',
  '.csv': 'csv',
  '.jsonl': 'jsonl',
  '.ndjson': 'jsonl',
};

/**
 * What the reader yields for a name whose bytes are not UTF-8. Decoded, such bytes become U+FFFD,
 * and the name listed with it was not the miner's repository (an audit's finding). The check is
 * on the decoded name, the same for the three formats: U+FFFD written as such (its bytes, or
 * `\ufffd` in JSON) counts too, and is never in a repository id either.
 */
export const NOT_UTF8 = Symbol('not UTF-8');

/** A `repo_name` value of the file: text, null where the row has none, or NOT_UTF8. */
export type RepoNameValue = string | null | typeof NOT_UTF8;

/** A file that was read but does not hold what we expect (as opposed to a file-system error). */
export class RepoFileError extends Error {
  override name = 'RepoFileError';
}

export function repoFileFormatOf(path: string): RepoFileFormat {
  const format = FORMATS_BY_EXTENSION[extname(path).toLowerCase()];
  if (!format)
    throw new RepoFileError(`unknown format, expected a .parquet, .csv, .jsonl or .ndjson file`);
  return format;
}

/**
 * Yields the `repo_name` of every row of the file, in file order: a string, null where the
 * row has none (a Parquet or JSON null, an empty CSV cell), or NOT_UTF8. Rows are streamed, so a
 * large file is never held in memory as a whole. File-system errors (ENOENT, EACCES) are thrown as
 * they are; a file without the column, or that cannot be parsed, throws a RepoFileError.
 */
export function readRepoNames(
  path: string,
  format: RepoFileFormat = repoFileFormatOf(path),
): AsyncGenerator<RepoNameValue> {
  switch (format) {
    case 'parquet':
      return readParquet(path);
    case 'csv':
      return readCsv(path);
    case 'jsonl':
      return readJsonLines(path);
  }
}

async function* readParquet(path: string): AsyncGenerator<RepoNameValue> {
  let reader: ParquetReader;
  try {
    const parquet = loadWhenUsed<typeof import('@dsnp/parquetjs')>('@dsnp/parquetjs');
    reader = await parquet.ParquetReader.openFile(path);
  } catch (error) {
    // ENOENT, EACCES… as for the other formats.
    if ((error as NodeJS.ErrnoException).code) throw error;
    throw new RepoFileError(`not a readable Parquet file (${(error as Error).message})`);
  }
  try {
    const columns = Object.keys(reader.getSchema().fields);
    if (!columns.includes(REPO_NAME_COLUMN)) throw missingColumn(columns);
    const cursor = reader.getCursor([[REPO_NAME_COLUMN]]);
    const next = () =>
      cursor
        .next()
        .catch((error: Error) =>
          Promise.reject(new RepoFileError(`unreadable Parquet data (${error.message})`)),
        );
    for (let row = await next(); row; row = await next()) {
      const value = (row as Record<string, unknown>)[REPO_NAME_COLUMN];
      if (value === null || value === undefined) yield null;
      else if (typeof value === 'string') yield utf8Checked(value);
      else if (Buffer.isBuffer(value)) yield utf8Checked(value.toString('utf8'));
      else throw new RepoFileError(`column "${REPO_NAME_COLUMN}" does not hold text`);
    }
  } finally {
    await reader.close();
  }
}

async function* readCsv(path: string): AsyncGenerator<RepoNameValue> {
  let column = -1;
  for await (const record of csvRecords(textChunks(path))) {
    if (column < 0) {
      const header = record.map((cell) => cell.trim());
      column = header.indexOf(REPO_NAME_COLUMN);
      if (column < 0) throw missingColumn(header);
      continue;
    }
    const cell = record[column];
    yield cell === undefined || cell === '' ? null : utf8Checked(cell);
  }
  if (column < 0)
    throw new RepoFileError(
      `empty CSV file, expected a header row with a "${REPO_NAME_COLUMN}" column`,
    );
}

async function* readJsonLines(path: string): AsyncGenerator<RepoNameValue> {
  let lineNumber = 0;
  for await (const line of textLines(textChunks(path))) {
    lineNumber += 1;
    if (line.trim() === '') continue;
    let row: unknown;
    try {
      row = JSON.parse(line);
    } catch {
      throw new RepoFileError(`line ${lineNumber} is not valid JSON`);
    }
    if (typeof row !== 'object' || row === null || Array.isArray(row))
      throw new RepoFileError(`line ${lineNumber} is not a JSON object`);
    if (!(REPO_NAME_COLUMN in row))
      throw new RepoFileError(`line ${lineNumber} has no "${REPO_NAME_COLUMN}" field`);
    const value = (row as Record<string, unknown>)[REPO_NAME_COLUMN];
    if (value !== null && typeof value !== 'string')
      throw new RepoFileError(`line ${lineNumber}: "${REPO_NAME_COLUMN}" must be a string or null`);
    yield value === null ? null : utf8Checked(value);
  }
}

/** The name, or NOT_UTF8 when it holds the U+FFFD that decoding puts for bytes not UTF-8. */
function utf8Checked(name: string): string | typeof NOT_UTF8 {
  return name.includes('\uFFFD') ? NOT_UTF8 : name;
}

function missingColumn(columns: readonly string[]): RepoFileError {
  return new RepoFileError(
    `no "${REPO_NAME_COLUMN}" column (found: ${columns.map((name) => `"${name}"`).join(', ') || 'none'})`,
  );
}

/** The file as UTF-8 text, chunk by chunk (a leading byte-order mark removed). */
async function* textChunks(path: string): AsyncGenerator<string> {
  const handle = await open(path, 'r');
  const stream = handle.createReadStream({ encoding: 'utf8', highWaterMark: 64 * 1024 });
  let first = true;
  try {
    for await (const chunk of stream as AsyncIterable<string>) {
      yield first ? chunk.replace(/^\uFEFF/, '') : chunk;
      first = false;
    }
  } finally {
    stream.destroy();
  }
}

/** Characters that end a stretch of plain text outside quotes. */
const CSV_SPECIAL = /[",\r\n]/g;

/**
 * RFC 4180 records: fields separated by commas, records by LF or CRLF, fields optionally quoted
 * with `"` (a quoted field may hold commas, newlines and `""` for a quote). Blank lines are
 * skipped. Plain stretches are copied with slice, not character by character.
 */
async function* csvRecords(chunks: AsyncIterable<string>): AsyncGenerator<string[]> {
  let record: string[] = [];
  let field = '';
  let fieldStart = true; // nothing read yet for this field: only here may a quote open it
  let quoted = false;
  let afterQuote = false; // read a `"` inside a quoted field: its end, or half of `""`
  for await (const chunk of chunks) {
    let index = 0;
    while (index < chunk.length) {
      if (quoted) {
        if (afterQuote) {
          afterQuote = false;
          if (chunk[index] === '"') {
            field += '"';
            index += 1;
          } else {
            quoted = false; // the quote closed the field; what follows is read as outside quotes
          }
          continue;
        }
        const quote = chunk.indexOf('"', index);
        field += chunk.slice(index, quote < 0 ? chunk.length : quote);
        if (quote < 0) break;
        afterQuote = true;
        index = quote + 1;
        continue;
      }
      CSV_SPECIAL.lastIndex = index;
      const special = CSV_SPECIAL.exec(chunk);
      const end = special ? special.index : chunk.length;
      if (end > index) [field, fieldStart] = [field + chunk.slice(index, end), false];
      if (!special) break;
      index = end + 1;
      const char = special[0];
      if (char === '"') {
        if (fieldStart) quoted = true;
        else field += char;
        fieldStart = false;
      } else if (char === ',') {
        record.push(field);
        [field, fieldStart] = ['', true];
      } else if (char === '\n') {
        if (record.length > 0 || !fieldStart) yield [...record, field];
        [record, field, fieldStart] = [[], '', true];
      }
    }
  }
  if (quoted && !afterQuote) throw new RepoFileError('unterminated quoted CSV field');
  if (record.length > 0 || !fieldStart) yield [...record, field];
}

import { DuckDBInstance } from '@duckdb/node-api';

/** A Parquet file as an independent reader (DuckDB) sees it: column types and rows. */
export interface ReadParquet {
  /** Column name → DuckDB type, in file order (`TIMESTAMP`, `VARCHAR[]`, …). */
  columns: Record<string, string>;
  /** Values made comparable with JSON: timestamps as ISO strings, BIGINTs as numbers. */
  rows: Record<string, unknown>[];
}

export async function readParquet(file: string): Promise<ReadParquet> {
  const instance = await DuckDBInstance.create(':memory:');
  const connection = await instance.connect();
  try {
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
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
}

function plain(value: unknown): unknown {
  if (value instanceof Date) return value.toISOString();
  if (typeof value === 'bigint') return Number(value);
  if (Array.isArray(value)) return value.map(plain);
  if (value !== null && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, plain(inner)]));
  return value;
}

/**
 * An item of a JSON lines dataset as the flat row the Parquet file should hold: nested objects'
 * fields joined with `_` (`user.username` → `user_username`), lists kept, everything else as is.
 */
export function flattenItem(item: object): Record<string, unknown> {
  const row: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(item)) {
    if (value !== null && typeof value === 'object' && !Array.isArray(value))
      for (const [inner, nested] of Object.entries(value)) row[`${key}_${inner}`] = nested;
    else row[key] = value;
  }
  return row;
}

/**
 * The JSON lines items, column by column as the Parquet file's columns: every field of every
 * item must be a column (nothing dropped), and a column an item lacks reads as null.
 */
export function expectedRows(
  items: readonly object[],
  columns: Record<string, string>,
): Record<string, unknown>[] {
  return items.map((item) => {
    const flat = flattenItem(item);
    const missing = Object.keys(flat).filter((field) => !(field in columns));
    if (missing.length > 0) throw new Error(`fields without a column: ${missing.join(', ')}`);
    return Object.fromEntries(Object.keys(columns).map((column) => [column, flat[column] ?? null]));
  });
}

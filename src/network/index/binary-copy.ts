import { IndexRow } from './compressed-index';
import { labelIdOf } from './prepared-index';

/** `COPY … FROM STDIN (FORMAT binary)` of miner_index rows: the columns in this order. */
export const COPY_COLUMNS = '(miner_uid, source, label_id, time_bucket, content_size_bytes)';

/** The binary COPY signature, then 32-bit flags and header-extension length (both 0). */
const HEADER = Buffer.from([
  ...Buffer.from('PGCOPY\n\xff\r\n\0', 'latin1'),
  ...[0, 0, 0, 0],
  ...[0, 0, 0, 0],
]);
/**
 * Field count (int16), then per field its length (int32) and value: int4, int2, int4, int4, int8.
 */
const ROW_BYTES = 2 + (4 + 4) + (4 + 2) + (4 + 4) + (4 + 4) + (4 + 8);
const ROWS_PER_CHUNK = 8192;

/**
 * The rows, in `order`, in Postgres's binary COPY format
 * (https://www.postgresql.org/docs/current/sql-copy.html#id-1.9.3.55.9.4): no text to format
 * here and none to parse in the server. Chunks of a few hundred kB, so that the server starts
 * loading while the rest is encoded.
 */
export function* binaryCopyChunks(
  uid: number,
  rows: readonly IndexRow[],
  order: Uint32Array,
  labelIds: ReadonlyMap<string, number>,
): Generator<Buffer> {
  yield HEADER;
  for (let first = 0; first < order.length; first += ROWS_PER_CHUNK) {
    const last = Math.min(first + ROWS_PER_CHUNK, order.length);
    const chunk = Buffer.allocUnsafe((last - first) * ROW_BYTES);
    // DataView: several times faster per value than Buffer's bounds-checked write methods.
    const view = new DataView(chunk.buffer, chunk.byteOffset, chunk.length);
    let at = 0;
    for (let i = first; i < last; i++) {
      const row = rows[order[i]];
      view.setInt16(at, 5);
      view.setInt32(at + 2, 4);
      view.setInt32(at + 6, uid);
      view.setInt32(at + 10, 2);
      view.setInt16(at + 14, row.source);
      at += 16;
      if (row.label === null) {
        view.setInt32(at, -1);
        at += 4;
      } else {
        view.setInt32(at, 4);
        view.setInt32(at + 4, labelIdOf(labelIds, row.label));
        at += 8;
      }
      view.setInt32(at, 4);
      view.setInt32(at + 4, row.timeBucket);
      view.setInt32(at + 8, 8);
      // A safe integer (below 2^53) as two 32-bit halves: no BigInt per row.
      view.setUint32(at + 12, Math.floor(row.bytes / 2 ** 32));
      view.setUint32(at + 16, row.bytes % 2 ** 32);
      at += 20;
    }
    // A NULL label takes 4 bytes less than the row size allows for.
    yield at === chunk.length ? chunk : chunk.subarray(0, at);
  }
  yield Buffer.from([0xff, 0xff]);
}

import { gunzipSync } from 'node:zlib';
import type { Test } from 'supertest';

/**
 * A download's body read whole, as bytes (a gzip JSON lines or Parquet dataset): supertest
 * would otherwise parse or drop a body whose type it does not know.
 */
export function asBytes(request: Test): Test {
  return request.buffer(true).parse((response, callback) => {
    const chunks: Buffer[] = [];
    response.on('data', (chunk: Buffer) => chunks.push(chunk));
    response.on('end', () => callback(null, Buffer.concat(chunks)));
  });
}

/** The items of a gzip JSON lines dataset, one per line. */
export function jsonLines<T = unknown>(gzipped: Buffer): T[] {
  return gunzipSync(gzipped)
    .toString('utf8')
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as T);
}

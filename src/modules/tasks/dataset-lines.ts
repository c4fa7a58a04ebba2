import { createReadStream } from 'node:fs';
import { createGunzip } from 'node:zlib';
import { textLines } from '../../common/text-lines';

/**
 * The lines of a gzip JSON lines dataset file (writeJsonLines), one item each, blank lines left
 * out: JSON.stringify escapes every `\n` inside a value. Read as a stream, never the whole file
 * in memory; the file is closed when the reader stops early too. Every reader of a dataset's
 * rows goes through it: the Parquet conversion, and an author's erasure.
 */
export async function* datasetLines(path: string): AsyncGenerator<string> {
  const file = createReadStream(path);
  const input = file.pipe(createGunzip()).setEncoding('utf8');
  file.once('error', (error) => input.destroy(error));
  try {
    for await (const line of textLines(input)) if (line !== '') yield line;
  } finally {
    // Leaving the lines early does not close the file they were read from.
    input.destroy();
    file.destroy();
  }
}

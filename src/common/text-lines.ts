import type { Readable } from 'node:stream';

/**
 * The lines of a text read chunk by chunk, without their `\n` or `\r\n`; a last line with no
 * line break after it is yielded too. Only `\n` ends a line: a JSON line keeps U+2028 and U+2029
 * inside its strings (JSON.stringify leaves them as they are), and Node's readline ends lines
 * there from Node 24 on (nodejs/node#57591), the image's runtime: it cut such items in two.
 */
export async function* textLines(chunks: AsyncIterable<string>): AsyncGenerator<string> {
  let pending = '';
  for await (const chunk of chunks) {
    let start = 0;
    for (let end = chunk.indexOf('\n'); end >= 0; end = chunk.indexOf('\n', start)) {
      const line = pending + chunk.slice(start, end);
      pending = '';
      yield line.endsWith('\r') ? line.slice(0, -1) : line;
      start = end + 1;
    }
    pending += chunk.slice(start);
  }
  if (pending !== '') yield pending;
}

/**
 * Line breaks other than `\n`, `\r` and the controls, which JSON.stringify leaves raw in strings.
 */
const UNESCAPED_BREAKS = /[\u0085\u2028\u2029]/g;

/**
 * `value` as one line of JSON lines, its `\n` included. U+0085, U+2028 and U+2029 are escaped
 * (`\u2028`: the same JSON value), so that a reader splitting on every Unicode line break
 * (Node 24's readline, Python's `str.splitlines`) still reads one value per line.
 */
export function jsonLine(value: unknown): string {
  const json = JSON.stringify(value).replace(
    UNESCAPED_BREAKS,
    (character) => `\\u${character.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
  return `${json}\n`;
}

/**
 * Calls `handle` with each line of `stream` (UTF-8 text) as it arrives, until the stream ends
 * or fails: a child process's output, read by tests and benches as textLines reads a file.
 */
export function forEachLine(stream: Readable, handle: (line: string) => void): void {
  const read = async () => {
    for await (const line of textLines(stream.setEncoding('utf8'))) handle(line);
  };
  read().catch(() => undefined);
}

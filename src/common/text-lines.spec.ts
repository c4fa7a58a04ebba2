// Only to compare with: the project reads lines with textLines.
// eslint-disable-next-line no-restricted-imports
import { createInterface } from 'node:readline';
import { PassThrough, Readable } from 'node:stream';
import { setImmediate } from 'node:timers/promises';
import { forEachLine, jsonLine, textLines } from './text-lines';

async function linesOf(chunks: string[]): Promise<string[]> {
  const lines: string[] = [];
  for await (const line of textLines(Readable.from(chunks))) lines.push(line);
  return lines;
}

describe(textLines.name, () => {
  it('ends lines at \\n and \\r\\n only, keeping U+2028, U+2029, U+0085 and a lone \\r', async () => {
    const item = JSON.stringify({ text: 'one\u2028two\u2029three\u0085four\rfive' });
    expect(await linesOf([`${item}\n${item}\r\n`])).toEqual([item, item]);
  });

  it('joins a line cut across chunks, \\r\\n cut between its two characters included', async () => {
    expect(await linesOf(['{"a"', ':1}\r', '\n{"b":', '2}\n', '{"c":3}'])).toEqual([
      '{"a":1}',
      '{"b":2}',
      '{"c":3}',
    ]);
  });

  it('yields empty lines, and nothing for a text that ends with its line break', async () => {
    expect(await linesOf(['a\n\nb\n'])).toEqual(['a', '', 'b']);
    expect(await linesOf([])).toEqual([]);
    expect(await linesOf([''])).toEqual([]);
  });

  it('reads a long line in many chunks', async () => {
    const long = 'x'.repeat(100_000);
    const chunks = long.match(/.{1,1000}/g)!;
    expect(await linesOf([...chunks, '\nshort\n'])).toEqual([long, 'short']);
  });

  // Why not readline: on Node 24 it ends lines at U+2028 and U+2029 (nodejs/node#57591).
  it('agrees with readline wherever readline does not split inside a JSON string', async () => {
    const text = '{"a":1}\r\n\n{"b":"x\\ny"}\n{"c":3}';
    const read: string[] = [];
    for await (const line of createInterface({ input: Readable.from([text]), crlfDelay: Infinity }))
      read.push(line);
    expect(await linesOf([text])).toEqual(read);
  });
});

describe(forEachLine.name, () => {
  it('hands over each line as it arrives, bytes of one character split across writes', async () => {
    const stream = new PassThrough();
    const lines: string[] = [];
    forEachLine(stream, (line) => lines.push(line));
    const bytes = Buffer.from('{"msg":"a\u2028b 🚀"}\n');
    stream.write(bytes.subarray(0, bytes.length - 4));
    stream.write(bytes.subarray(bytes.length - 4));
    await setImmediate();
    expect(lines).toEqual(['{"msg":"a\u2028b 🚀"}']);
    stream.end('last\n');
    await setImmediate();
    expect(lines).toEqual(['{"msg":"a\u2028b 🚀"}', 'last']);
  });
});

/**
 * Every line break Python's str.splitlines knows, which is also every one Node 24's readline does.
 */
const EVERY_LINE_BREAK = /\r\n|[\n\r\v\f\x1c-\x1e\x85\u2028\u2029]/;

describe(jsonLine.name, () => {
  it('is one line for any reader: U+0085, U+2028 and U+2029 escaped, the same value', () => {
    const value = { text: 'a\u0085b\u2028c\u2029d\ne\rf\vg\fh\x1ci', [`key\u2028`]: ['\u2029'] };
    const line = jsonLine(value);
    expect(line.endsWith('\n')).toBe(true);
    expect(line.slice(0, -1).split(EVERY_LINE_BREAK)).toHaveLength(1);
    expect(line).toContain('a\\u0085b\\u2028c\\u2029d');
    expect(JSON.parse(line)).toEqual(value);
  });

  it('is JSON.stringify otherwise, a backslash and "u2028" as text included', () => {
    const value = { text: 'plain \\u2028 🚀 "quoted"', n: 1.5, none: null };
    expect(jsonLine(value)).toBe(`${JSON.stringify(value)}\n`);
  });
});

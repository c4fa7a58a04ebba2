import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { gunzipSync } from 'node:zlib';
import { DatasetRow, writeJsonLines } from './dataset-writer';

/** `count` rows of one writer, each after a pause, so that two writers interleave. */
async function* slowRows(writer: string, count: number): AsyncGenerator<DatasetRow> {
  for (let n = 0; n < count; n++) {
    await sleep(2);
    const datetime = new Date(Date.UTC(2026, 0, 1, 0, n));
    yield { uri: `${writer}-${n}`, datetime, item: { writer, n, padding: 'x'.repeat(2000) } };
  }
}

describe(writeJsonLines.name, () => {
  let directory: string;
  beforeEach(() => (directory = mkdtempSync(join(tmpdir(), 'dataset-writer-'))));
  afterEach(() => rmSync(directory, { recursive: true, force: true }));

  it('lets two compiles of one task (two replicas) finish with a whole file whose hash it recorded', async () => {
    const path = join(directory, 'task.jsonl.gz');
    const written = await Promise.all([
      writeJsonLines(path, slowRows('a', 40)),
      writeJsonLines(path, slowRows('b', 40)),
    ]);
    const bytes = readFileSync(path);
    const sha256 = createHash('sha256').update(bytes).digest('hex');
    expect(written.map((file) => file.sha256)).toContain(sha256);
    const writers = gunzipSync(bytes)
      .toString()
      .trim()
      .split('\n')
      .map((line) => (JSON.parse(line) as { writer: string }).writer);
    expect(writers).toHaveLength(40);
    expect(new Set(writers).size).toBe(1);
    expect(readdirSync(directory)).toEqual(['task.jsonl.gz']);
  });

  it('writes one item per line for readers that end lines at U+2028 too, the values unchanged', async () => {
    const path = join(directory, 'task.jsonl.gz');
    const items = [
      { text: 'one\u2028two\u2029three\u0085four', n: 0 },
      { text: 'line\nbreak\r\n', n: 1 },
    ];
    async function* rows(): AsyncGenerator<DatasetRow> {
      for (const [n, item] of items.entries())
        yield { uri: `u${n}`, datetime: new Date(Date.UTC(2026, 0, 1, 0, n)), item };
    }
    await writeJsonLines(path, rows());
    const text = gunzipSync(readFileSync(path)).toString();
    // Python's str.splitlines and Node 24's readline break at each of these.
    const lines = text.split(/\r\n|[\n\r\v\f\x1c-\x1e\x85\u2028\u2029]/).filter(Boolean);
    expect(lines.map((line) => JSON.parse(line) as unknown)).toEqual(items);
  });
});

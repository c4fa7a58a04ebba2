/**
 * What a task's Parquet file costs beside its JSON lines file (the baseline, which compiling
 * wrote before): time to write, bytes, how long the writer stalls the event loop the API
 * shares (max and p99 of the loop's delay while writing) and how far the process's resident
 * memory rose over its level before the write (a worker thread's included). Then what a
 * download's check of the bytes it sends costs (recordedBytes: counted and hashed, the last chunk
 * held back) beside the file's plain read stream, reading each file DOWNLOAD_READS times a round,
 * the two ways alternating. Devnet X items; medians of rounds.
 * Run: npm run bench:datasets [-- --rows 20000 --rounds 3] (or BENCH_ROWS, BENCH_ROUNDS).
 */
import { createReadStream, mkdtempSync, rmSync, statSync } from 'node:fs';
import { Readable } from 'node:stream';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { benchFlags } from './support/flags';
import { generateCorpus } from '../src/devnet/corpus';
import { writeParquet } from '../src/modules/tasks/dataset-parquet';
import { DatasetRow, sha256OnDisk, writeJsonLines } from '../src/modules/tasks/dataset-writer';
import { recordedBytes } from '../src/modules/tasks/recorded-bytes';
import { cleanupOnExit } from './support/cleanup';
import { alternatingMedians, integerSetting, percentile } from './support/measure';
import { commandLine, formatInt, machineLine, table } from './support/report';

const { values: flags } = benchFlags({
  options: { rows: { type: 'string' }, rounds: { type: 'string' } },
});
const rowCount = integerSetting('rows', flags.rows, 'BENCH_ROWS', 20_000);
const rounds = integerSetting('rounds', flags.rounds, 'BENCH_ROUNDS', 3);

interface Run {
  ms: number;
  bytes: number;
  stallMaxMs: number;
  stallP99Ms: number;
  /** The peak's rise over the RSS just before the write: what this writer added. */
  rssRiseMb: number;
}

async function measure(write: () => Promise<{ bytes: number }>): Promise<Run> {
  const delay = monitorEventLoopDelay({ resolution: 5 });
  delay.enable();
  // Sampled on the event loop: a stall hides what it allocates only until the next sample.
  // Measured from the level before the write, so that the corpus, and whatever the previous
  // writer left, count for neither (a methods audit: the absolute peak compared little).
  const before = process.memoryUsage.rss();
  let peakRss = before;
  const sampler = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage.rss())), 5);
  const started = performance.now();
  try {
    const { bytes } = await write();
    const ms = performance.now() - started;
    peakRss = Math.max(peakRss, process.memoryUsage.rss());
    return {
      ms,
      bytes,
      stallMaxMs: delay.max / 1e6,
      stallP99Ms: delay.percentile(99) / 1e6,
      rssRiseMb: (peakRss - before) / 2 ** 20,
    };
  } finally {
    clearInterval(sampler);
    delay.disable();
  }
}

/** How many times a round reads each file as a download would. */
const DOWNLOAD_READS = 20;

async function drain(stream: Readable): Promise<void> {
  for await (const chunk of stream) void chunk;
}

/**
 * Median over the rounds of the ms to read `path` DOWNLOAD_READS times through each way of
 * `opens`, the ways alternating (alternatingMedians).
 */
function readMs<Way extends string>(
  path: string,
  opens: Record<Way, (path: string) => Readable>,
): Promise<Record<Way, number>> {
  return alternatingMedians(rounds, opens, async (open) => {
    const started = performance.now();
    for (let read = 0; read < DOWNLOAD_READS; read++) await drain(open(path));
    return performance.now() - started;
  });
}

function medianRun(runs: Run[]): Run {
  const median = (pick: (run: Run) => number) => percentile(runs.map(pick), 0.5);
  return {
    ms: median((run) => run.ms),
    bytes: runs[0].bytes,
    stallMaxMs: median((run) => run.stallMaxMs),
    stallP99Ms: median((run) => run.stallP99Ms),
    rssRiseMb: median((run) => run.rssRiseMb),
  };
}

async function main(): Promise<void> {
  const directory = mkdtempSync(join(tmpdir(), 'bench-datasets-'));
  // Ctrl-C or SIGTERM too: a stopped run left its files behind (a CLI audit).
  const cleanup = cleanupOnExit();
  cleanup.push(async () => rmSync(directory, { recursive: true, force: true }));
  const items = generateCorpus({ seed: 1, size: { x: rowCount, reddit: 1 } }).items.filter(
    (item) => item.source === 'X',
  );
  async function* rows(): AsyncGenerator<DatasetRow> {
    for (const item of items) yield { uri: item.uri, datetime: new Date(item.datetime), item };
  }
  const jsonlPath = join(directory, 'task.jsonl.gz');
  const parquetPath = join(directory, 'task.parquet');
  const jsonl: Run[] = [];
  const parquet: Run[] = [];
  const reads: { file: string; bytes: number; plainMs: number; checkedMs: number }[] = [];
  try {
    for (let round = 0; round < rounds; round++) {
      jsonl.push(await measure(() => writeJsonLines(jsonlPath, rows())));
      parquet.push(await measure(() => writeParquet('x', jsonlPath, parquetPath)));
    }
    for (const [file, path] of [
      ['JSON lines, gzip', jsonlPath],
      ['Parquet', parquetPath],
    ]) {
      const bytes = statSync(path).size;
      const sha256 = (await sha256OnDisk(path))!;
      const { plain, checked } = await readMs(path, {
        plain: (at) => createReadStream(at),
        checked: (at) =>
          recordedBytes(createReadStream(at), bytes, { sha256, onHashed: () => undefined }),
      });
      reads.push({ file, bytes, plainMs: plain, checkedMs: checked });
    }
  } finally {
    await cleanup.run();
  }
  const [ours, baseline] = [medianRun(parquet), medianRun(jsonl)];
  const ms = (value: number) => value.toFixed(0);
  process.stdout.write(
    [
      '',
      `A task dataset of ${formatInt(items.length)} X items: Parquet (ours) beside the JSON lines file, in one run`,
      `command:  ${commandLine()}`,
      `machine:  ${machineLine()}`,
      `method:   median over ${rounds} rounds; stalls are the event loop's delay while writing;`,
      `          RSS rise is the process's peak while writing (sampled every 5 ms) over its RSS just`,
      `          before; Parquet is made from the JSON lines file, so each round writes that first`,
      '',
      table([
        ['file', 'write ms', 'bytes', 'stall max ms', 'stall p99 ms', 'RSS rise MB'],
        [
          'Parquet (from the JSON lines file)',
          ms(ours.ms),
          formatInt(ours.bytes),
          ms(ours.stallMaxMs),
          ms(ours.stallP99Ms),
          ms(ours.rssRiseMb),
        ],
        [
          'JSON lines, gzip (baseline)',
          ms(baseline.ms),
          formatInt(baseline.bytes),
          ms(baseline.stallMaxMs),
          ms(baseline.stallP99Ms),
          ms(baseline.rssRiseMb),
        ],
      ]),
      '',
      `Reading each file for a download, ${DOWNLOAD_READS} times a round: checked as sent (ours) beside`,
      "the file's plain read stream (baseline), alternating; median over the rounds",
      '',
      table([
        ['file', 'bytes', 'checked ms', 'plain ms', 'checked / plain', 'checked MB/s'],
        ...reads.map((read) => [
          read.file,
          formatInt(read.bytes),
          read.checkedMs.toFixed(1),
          read.plainMs.toFixed(1),
          (read.checkedMs / read.plainMs).toFixed(2),
          ((read.bytes * DOWNLOAD_READS) / 2 ** 20 / (read.checkedMs / 1000)).toFixed(0),
        ]),
      ]),
      '',
    ].join('\n'),
  );
}

void main();

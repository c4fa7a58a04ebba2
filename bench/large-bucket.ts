/**
 * What a spot check of a large bucket costs: the answer for a bucket of `--mib` MiB of devnet
 * X posts (one hour, one label), checked as it arrives in 64 KiB pieces
 * (readEntitiesAsTheyArrive and BucketTally, ours, for claims past half of
 * MINER_MAX_RESPONSE_BYTES) beside the same answer read whole, parsed and checked (the baseline:
 * what answers within the cap get). Median time over rounds, the longest the event loop is held
 * by one piece, and the heap each holds at its peak, in one run.
 * Run: npm run bench:large-bucket [-- --mib 64 --rounds 5] (or BENCH_MIB, BENCH_ROUNDS).
 */
import { performance } from 'node:perf_hooks';
import { generateCorpus } from '../src/devnet/corpus';
import { toWireEntity } from '../src/devnet/miner-records';
import { BucketTally, checkBucket } from '../src/network/buckets/bucket-check';
import { bucketStart, XItem } from '../src/network/protocol';
import { readEntitiesAsTheyArrive } from '../src/network/sn13/entity-stream';
import { parseMinerJson } from '../src/network/sn13/miner-json';
import { benchFlags } from './support/flags';
import { integerSetting, numberSetting, percentile, settingText } from './support/measure';
import { commandLine, machineLine, table } from './support/report';

const { values: flags } = benchFlags({
  options: { mib: { type: 'string' }, rounds: { type: 'string' } },
});
const mib = numberSetting(settingText('mib', flags.mib, 'BENCH_MIB'), 64, false);
const rounds = integerSetting('rounds', flags.rounds, 'BENCH_ROUNDS', 5);

const HOUR = 500_000;
const LABEL = '#bitcoin';
const PIECE = 64 * 1024;
const bucket = { source: 2 as const, label: LABEL, timeBucket: HOUR };

/** Devnet X posts of the hour under LABEL until they claim `bytes`; the answer's text. */
function answerOf(bytes: number): { text: Buffer; claimed: number; entities: number } {
  const templates = generateCorpus({ seed: 7, size: { x: 200, reddit: 1 } }).items.filter(
    (item): item is XItem => item.source === 'X',
  );
  const entities = [];
  let claimed = 0;
  for (let n = 0; claimed < bytes; n++) {
    const item = structuredClone(templates[n % templates.length]);
    item.uri = `https://x.com/${item.user.username}/status/${10_000_000 + n}`;
    item.tweet.id = String(10_000_000 + n);
    item.datetime = new Date(bucketStart(HOUR).getTime() + (n % 3_600) * 1000).toISOString();
    item.label = LABEL;
    item.tweet.hashtags = [LABEL];
    const entity = toWireEntity(item);
    claimed += entity.content_size_bytes;
    entities.push(entity);
  }
  const text = Buffer.from(
    JSON.stringify({ name: 'GetDataEntityBucket', data_entities: entities }),
  );
  return { text, claimed, entities: entities.length };
}

interface Round {
  ms: number;
  /** The longest one piece held the event loop (ours), or the whole check (the baseline). */
  longestMs: number;
  peakHeapMiB: number;
  score: number;
}

function heapMiB(): number {
  return process.memoryUsage().heapUsed / 2 ** 20;
}

async function ours(text: Buffer, claimed: number): Promise<Round> {
  const start = heapMiB();
  let peak = start;
  let longest = 0;
  let pieceStarted = 0;
  async function* pieces(): AsyncGenerator<Buffer> {
    for (let at = 0; at < text.byteLength; at += PIECE) {
      pieceStarted = performance.now();
      yield text.subarray(at, at + PIECE);
      longest = Math.max(longest, performance.now() - pieceStarted);
      if (at % (PIECE * 64) === 0) peak = Math.max(peak, heapMiB());
    }
  }
  const tally = new BucketTally(bucket, claimed, false);
  const started = performance.now();
  await readEntitiesAsTheyArrive(pieces(), (entity) => tally.add(entity));
  const ms = performance.now() - started;
  return { ms, longestMs: longest, peakHeapMiB: peak - start, score: tally.result().score };
}

function whole(text: Buffer, claimed: number): Round {
  const start = heapMiB();
  const started = performance.now();
  const body = parseMinerJson(text.toString('utf8'), Math.floor(text.byteLength / 16)) as {
    data_entities: unknown[];
  };
  const peak = heapMiB();
  const { score } = checkBucket(bucket, claimed, body.data_entities);
  const ms = performance.now() - started;
  return { ms, longestMs: ms, peakHeapMiB: Math.max(peak, heapMiB()) - start, score };
}

async function main(): Promise<void> {
  const { text, claimed, entities } = answerOf(mib * 2 ** 20);
  const runs = { ours: [] as Round[], whole: [] as Round[] };
  for (let round = 0; round < rounds; round++) {
    runs.ours.push(await ours(text, claimed));
    runs.whole.push(whole(text, claimed));
  }
  for (const run of [...runs.ours, ...runs.whole])
    if (run.score !== 1) throw new Error(`an honest answer scored ${run.score}`);
  const median = (list: Round[], field: keyof Round) =>
    percentile(
      list.map((r) => r[field]),
      0.5,
    );
  const row = (name: string, list: Round[]) => [
    name,
    median(list, 'ms').toFixed(0),
    (text.byteLength / 2 ** 20 / (median(list, 'ms') / 1000)).toFixed(1),
    median(list, 'longestMs').toFixed(1),
    median(list, 'peakHeapMiB').toFixed(0),
  ];
  process.stdout.write(
    [
      '',
      'Checking a large bucket: ours (as it arrives, 64 KiB pieces) beside the answer read whole',
      `command:  ${commandLine()}`,
      `machine:  ${machineLine()}`,
      `answer:   ${(text.byteLength / 2 ** 20).toFixed(1)} MiB of text, ${entities} entities, claim ${(claimed / 2 ** 20).toFixed(1)} MiB`,
      `method:   median of ${rounds} rounds each, alternating; heap sampled (no forced GC)`,
      '',
      table([
        ['check', 'ms', 'MiB/s', 'longest hold ms', 'peak heap MiB'],
        row('ours: as it arrives', runs.ours),
        row('baseline: read whole', runs.whole),
      ]),
      `time ours/baseline: ${(median(runs.ours, 'ms') / median(runs.whole, 'ms')).toFixed(2)}`,
      '',
    ].join('\n'),
  );
}

void main();

import { AsyncLocalStorage } from 'node:async_hooks';
import { performance } from 'node:perf_hooks';
import { IndexRow, parseCompressedIndex } from '../../src/network/index/compressed-index';
import { IndexLabelsRepository } from '../../src/network/index/index-labels.repository';
import { IndexTotalsRepository } from '../../src/network/index/index-totals.repository';
import { MinerIndexRepository } from '../../src/network/index/miner-index.repository';
import { timeBucketId } from '../../src/network/protocol';
import { readCompressedIndex } from '../../src/network/sn13/messages';
import { runPool } from './measure';
import { formatInt, progress } from './report';
import { generateIndex, StatsShape } from './stats-index';

/** Ingest: each concurrency level runs this many blocks, interleaved (1,2,4,1,2,4,...). */
export const ROUNDS = 3;

// bench:stats' ingest (bench/stats.ts): the index sync's parse and replace of each miner's
// GetMinerIndex answer, timed step by step.

/**
 * The repositories' steps, in call order (wrapped on the instances, src untouched). The
 * gaps between them are named too: in replaceMinerIndex, prepareIndex (ordering the rows and
 * summing the totals in JS) runs between the labels' resolve and ensurePartition, the transaction's
 * BEGIN and the per-miner lock before copyRows, the aggregates lock and the UPDATE of the
 * miner row before applyDeltas, and COMMIT after it.
 */
export const STEP_METHODS = [
  'resolve',
  'ensurePartition',
  'copyRows',
  'buildLookupIndex',
  'swapTotals',
  'applyDeltas',
] as const;
type Marks = Partial<Record<`${(typeof STEP_METHODS)[number]}:${'start' | 'end'}`, number>>;
export const STEPS = [
  'parse',
  'labels upsert',
  'order rows + totals (JS)',
  'partition check',
  'BEGIN + miner lock',
  'TRUNCATE + binary COPY',
  'CREATE INDEX lookup',
  'miner totals (old out, new in)',
  'aggregates lock + miner row',
  'aggregate deltas',
  'COMMIT',
] as const;
type Step = (typeof STEPS)[number];

const stepMarks = new AsyncLocalStorage<Marks>();

/**
 * Times each step of replaceMinerIndex, a method of the index's repository, its totals
 * repository or its labels repository; false when the internals changed (no steps).
 */
export function instrument(
  repository: MinerIndexRepository,
  totals: IndexTotalsRepository,
  labels: IndexLabelsRepository,
): boolean {
  const owners = [repository, totals, labels] as unknown as Record<string, unknown>[];
  const ownerOf = (name: string) => owners.find((owner) => typeof owner[name] === 'function');
  if (!STEP_METHODS.every((name) => ownerOf(name))) return false;
  for (const name of STEP_METHODS) {
    const target = ownerOf(name)!;
    const original = target[name] as (...args: unknown[]) => Promise<unknown>;
    target[name] = async function (this: unknown, ...args: unknown[]): Promise<unknown> {
      const marks = stepMarks.getStore();
      if (marks) marks[`${name}:start`] = performance.now();
      try {
        return await original.apply(this, args);
      } finally {
        if (marks) marks[`${name}:end`] = performance.now();
      }
    };
  }
  return true;
}

export interface MinerIngest {
  uid: number;
  concurrency: number;
  rows: number;
  ms: number;
  steps: Partial<Record<Step, number>>;
}

/** Every step and gap from the marks; together they add up to the miner's whole time. */
function stepsOf(marks: Marks, start: number, parsed: number, end: number): MinerIngest['steps'] {
  const m = (key: keyof Marks): number => marks[key] ?? NaN;
  const steps: MinerIngest['steps'] = {
    parse: parsed - start,
    'labels upsert': m('resolve:end') - m('resolve:start'),
    'order rows + totals (JS)': m('ensurePartition:start') - m('resolve:end'),
    'partition check': m('ensurePartition:end') - m('ensurePartition:start'),
    'BEGIN + miner lock': m('copyRows:start') - m('ensurePartition:end'),
    'TRUNCATE + binary COPY': m('copyRows:end') - m('copyRows:start'),
    'CREATE INDEX lookup': m('buildLookupIndex:end') - m('buildLookupIndex:start'),
    'miner totals (old out, new in)': m('swapTotals:end') - m('swapTotals:start'),
    'aggregates lock + miner row': m('applyDeltas:start') - m('swapTotals:end'),
    'aggregate deltas': m('applyDeltas:end') - m('applyDeltas:start'),
    COMMIT: end - m('applyDeltas:end'),
  };
  return Object.fromEntries(Object.entries(steps).filter(([, ms]) => Number.isFinite(ms)));
}

export interface Block {
  index: number;
  concurrency: number;
  miners: number;
  rows: number;
  seconds: number;
  rowsBefore: number;
}

export interface BlockRun {
  miners: MinerIngest[];
  rows: number;
  seconds: number;
  generationSeconds: number;
}

/**
 * Generates the GetMinerIndex answers of `uids` as miners send them (untimed: the synapse's JSON,
 * the index inside it as a JSON string), then times parse + replace of each, `concurrency` miners
 * in flight: what the index sync job does once it has read the answer's body.
 */
export async function ingestBlock(
  repository: MinerIndexRepository,
  shape: StatsShape,
  uids: number[],
  concurrency: number,
  now: Date,
  generation: string,
): Promise<BlockRun> {
  const generated = performance.now();
  const answers = uids.map((uid) =>
    JSON.stringify({
      name: 'GetMinerIndex',
      version: 4,
      compressed_index_serialized: JSON.stringify(
        generateIndex(shape, uid, timeBucketId(now), generation),
      ),
    }),
  );
  const generationSeconds = (performance.now() - generated) / 1000;
  const started = performance.now();
  const miners: MinerIngest[] = [];
  await runPool(uids.length, concurrency, async (i) => {
    const start = performance.now();
    const index = readCompressedIndex(JSON.parse(answers[i]) as unknown);
    const rows: IndexRow[] = parseCompressedIndex(index, now);
    const parsed = performance.now();
    const marks: Marks = {};
    await stepMarks.run(marks, () => repository.replaceMinerIndex(uids[i], rows));
    const end = performance.now();
    const steps = stepsOf(marks, start, parsed, end);
    miners.push({ uid: uids[i], concurrency, rows: rows.length, ms: end - start, steps });
  });
  const seconds = (performance.now() - started) / 1000;
  const rows = miners.reduce((sum, miner) => sum + miner.rows, 0);
  return { miners, rows, seconds, generationSeconds };
}

/** What the initial load did, block by block and miner by miner. */
export interface IngestRun {
  blocks: Block[];
  miners: MinerIngest[];
  generationSeconds: number;
  blockSize: number;
}

/**
 * The initial load: every miner once, in blocks that interleave the concurrency `levels`
 * (1,2,4,1,2,4,…: ROUNDS blocks each), so that each level meets the table at every size.
 */
export async function ingest(
  repository: MinerIndexRepository,
  shape: StatsShape,
  levels: readonly number[],
  now: Date,
): Promise<IngestRun> {
  const blockSize = Math.ceil(shape.miners / (levels.length * ROUNDS));
  const blocks: Block[] = [];
  const miners: MinerIngest[] = [];
  let generationSeconds = 0;
  let rowsSoFar = 0;
  for (let first = 0, index = 0; first < shape.miners; first += blockSize, index += 1) {
    const uids = Array.from(
      { length: Math.min(blockSize, shape.miners - first) },
      (_, i) => first + i,
    );
    const concurrency = levels[index % levels.length];
    const run = await ingestBlock(repository, shape, uids, concurrency, now, 'initial');
    generationSeconds += run.generationSeconds;
    miners.push(...run.miners);
    const { rows, seconds } = run;
    blocks.push({ index, concurrency, miners: uids.length, rows, seconds, rowsBefore: rowsSoFar });
    rowsSoFar += rows;
    progress(
      `ingest block ${index + 1}: miners ${uids[0]}–${uids[uids.length - 1]}, concurrency ${concurrency}: ` +
        `${formatInt(rows)} rows in ${seconds.toFixed(1)} s = ${formatInt(rows / seconds)} rows/s ` +
        `(${formatInt(rowsSoFar)} rows loaded)`,
    );
  }
  return { blocks, miners, generationSeconds, blockSize };
}

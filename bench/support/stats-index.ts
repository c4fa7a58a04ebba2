import { createRng, deriveSeed, Rng, WeightedPicker } from '../../src/devnet/rng';
import {
  CompressedLabelBuckets,
  CompressedMinerIndex,
  MAX_BUCKET_BYTES,
  MAX_DATA_AGE_DAYS,
  MetagraphNeuron,
} from '../../src/network/protocol';
import { SourceId } from '../../src/network/sources';

/**
 * The synthetic miner indexes bench:stats loads (bench/stats.ts): what each miner claims, its
 * credibility and its metagraph entry, deterministic in the seed.
 */
export interface StatsShape {
  miners: number;
  /** Distinct (source, label, hour) buckets in each miner's index. */
  buckets: number;
  /** Labels per source. */
  labels: number;
  seed: number;
}

export const HOURS = MAX_DATA_AGE_DAYS * 24;
/** Sizes: log-normal, median 30 kB, σ 1.6 (a few buckets of tens of MB, many of a few kB). */
export const SIZE_MEDIAN = 30_000;
export const SIZE_SIGMA = 1.6;
/** Share of each miner's buckets that are X (source 2); the rest is Reddit (source 1). */
export const X_SHARE = 0.5;

export const labelName = (source: SourceId, rank: number): string =>
  source === 2 ? `#tag${rank + 1}` : `r/sub${rank + 1}`;

/** One bit per (label, hour) of a source: a miner claims each at most once. Reused per miner. */
let claimed = new Uint8Array(0);

/**
 * The index miner `uid` sends (GetMinerIndex), deterministic in (seed, generation, uid): exactly
 * `shape.buckets` distinct (source, label, hour) buckets, labels Zipf-distributed (exponent
 * 0.9–1.2 per miner, so popular labels are everyone's and the tail differs), hours skewed towards
 * the present, sizes log-normal, at most the 128 MiB bucket cap (a larger claim rejects the
 * index) and never 0 (a 0 would be dropped by the parser).
 */
export function generateIndex(
  shape: StatsShape,
  uid: number,
  nowBucket: number,
  generation: string,
): CompressedMinerIndex {
  const rng = createRng(deriveSeed(shape.seed, 'stats-miner', generation, uid));
  const ranks = Array.from({ length: shape.labels }, (_, rank) => rank);
  const picker = WeightedPicker.zipf(ranks, 0.9 + 0.3 * rng.next());
  const xBuckets = Math.round(shape.buckets * X_SHARE);
  if (claimed.length !== shape.labels * HOURS) claimed = new Uint8Array(shape.labels * HOURS);
  const sources: CompressedMinerIndex['sources'] = {};
  for (const [source, count] of [
    [1, shape.buckets - xBuckets],
    [2, xBuckets],
  ] as const) {
    claimed.fill(0);
    for (let taken = 0; taken < count;) {
      const slot = picker.pick(rng) * HOURS + Math.floor(HOURS * Math.pow(rng.next(), 1.3));
      if (claimed[slot] === 0) {
        claimed[slot] = 1;
        taken += 1;
      }
    }
    const entries: CompressedLabelBuckets[] = [];
    for (let rank = 0; rank < shape.labels; rank += 1) {
      const time_bucket_ids: number[] = [];
      const sizes_bytes: number[] = [];
      for (let age = 0, slot = rank * HOURS; age < HOURS; age += 1, slot += 1) {
        if (claimed[slot] === 0) continue;
        time_bucket_ids.push(nowBucket - age);
        sizes_bytes.push(logNormalSize(rng));
      }
      if (time_bucket_ids.length > 0) {
        entries.push({ label: labelName(source, rank), time_bucket_ids, sizes_bytes });
      }
    }
    sources[String(source)] = entries;
  }
  return { sources };
}

function logNormalSize(rng: Rng): number {
  const normal = Math.sqrt(-2 * Math.log(1 - rng.next())) * Math.cos(2 * Math.PI * rng.next());
  // At most the subnet's bucket cap: a claim over it rejects the whole index.
  return Math.min(
    MAX_BUCKET_BYTES,
    Math.max(1, Math.round(SIZE_MEDIAN * Math.exp(SIZE_SIGMA * normal))),
  );
}

/** Credibility 0.05–1, most miners fairly credible, a few not at all. */
export function credibilityOf(seed: number, uid: number): number {
  const u = createRng(deriveSeed(seed, 'stats-credibility', uid)).next();
  return Math.round((0.05 + 0.95 * Math.pow(u, 0.6)) * 1e4) / 1e4;
}

/** Miner `uid` of `miners` as the metagraph lists it (its axon refuses: nothing is called). */
export function neuronOf(uid: number, miners: number): MetagraphNeuron {
  const id = String(uid).padStart(4, '0');
  return {
    uid,
    hotkey: `5BenchStatsMinerHotkey${id}`,
    coldkey: `5BenchStatsMinerColdkey${id}`,
    // Port 1 on loopback refuses: nothing may reach a real host, and no job runs during the
    // bench anyway (INDEX_SYNC_ON_START=false, a day-long interval, no metagraph source).
    axon_url: 'http://127.0.0.1:1',
    stake: 10 + (uid % 7),
    incentive: 1 / miners,
    validator_permit: false,
  };
}

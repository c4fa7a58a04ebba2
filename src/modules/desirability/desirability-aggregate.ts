import { createHash } from 'node:crypto';
import { Source } from '../../common/source';
import { firstCharacters } from '../../common/characters';
import { MAX_ID_LENGTH } from './desirability-fields';
import { inParamsOrder, JobParamsView, JobView, LegacyDesirability } from './desirability.types';

/** Share of the aggregate that belongs to the network owner's default list. */
export const OWNER_SHARE = 0.3;
/** Share of the aggregate that belongs to the validators' votes, split by stake. */
export const VALIDATORS_SHARE = 0.7;

export interface Vote {
  hotkey: string;
  /** Normalized: the weights of one vote sum to 1. */
  jobs: JobView[];
}

export interface AggregateInput {
  /** The owner's default list, normalized; standing jobs, always included. */
  owner: readonly JobView[];
  votes: readonly Vote[];
  /** Stake by validator hotkey, from the metagraph (null: unknown). */
  stakes: ReadonlyMap<string, number | null>;
  /**
   * Only jobs whose task is active weigh (local votes: their jobs are our tasks). Absent: every
   * job weighs (votes read from the network name no task of ours).
   */
  activeTaskIds?: ReadonlySet<string>;
}

/**
 * Each voter's share of the validators' part: its stake over the voters' total stake. A voter
 * missing from `stakes` (not a validator) has stake 0. When no voter has stake, they share
 * equally, so that votes still count on a network without stake data. When the metagraph gave
 * no stakes (null), the validators among the voters share equally and the others get nothing.
 */
export function stakeShares(
  hotkeys: readonly string[],
  stakes: ReadonlyMap<string, number | null>,
): Map<string, number> {
  if (hotkeys.some((hotkey) => stakes.get(hotkey) === null)) {
    const validators = hotkeys.filter((hotkey) => stakes.has(hotkey)).length;
    return new Map(hotkeys.map((hotkey) => [hotkey, stakes.has(hotkey) ? 1 / validators : 0]));
  }
  const stakeOf = (hotkey: string) => {
    const stake = stakes.get(hotkey) ?? 0;
    return Number.isFinite(stake) && stake > 0 ? stake : 0;
  };
  const total = hotkeys.reduce((sum, hotkey) => sum + stakeOf(hotkey), 0);
  return new Map(
    hotkeys.map((hotkey) => [hotkey, total > 0 ? stakeOf(hotkey) / total : 1 / hotkeys.length]),
  );
}

interface Merged {
  /** `paramsKey(params)`, made once: the sort compares it at every tie. */
  key: string;
  params: JobParamsView;
  weight: number;
  ownerId: string | undefined;
  /** Weight contributed under each id. */
  byId: Map<string, number>;
}

/**
 * weight(job) = 0.3 × owner(job) + 0.7 × Σ_validators share(v) × vote_v(job), counting only
 * active tasks of the votes when `activeTaskIds` is given. Jobs with the same five params
 * (`paramsKey`, the subnet reader's `create_job_key`) are one job whatever their ids: it is
 * listed under the owner's id if the owner has it, else under the id that contributed most.
 * Heaviest first; weights as computed, which `roundedJobs` lists and `legacyLabels` adds up
 * (a label added up from rounded weights was off in its 12th digit: found by a review).
 */
export function unroundedAggregate(input: AggregateInput): JobView[] {
  const merged = new Map<string, Merged>();
  const add = (job: JobView, weight: number, fromOwner: boolean) => {
    const key = paramsKey(job.params);
    const entry = merged.get(key) ?? {
      key,
      params: job.params,
      weight: 0,
      ownerId: undefined,
      byId: new Map<string, number>(),
    };
    entry.weight += weight;
    entry.byId.set(job.id, (entry.byId.get(job.id) ?? 0) + weight);
    if (fromOwner) entry.ownerId ??= job.id;
    merged.set(key, entry);
  };

  for (const job of input.owner) add(job, OWNER_SHARE * job.weight, true);
  const shares = stakeShares(
    input.votes.map((vote) => vote.hotkey),
    input.stakes,
  );
  for (const vote of input.votes) {
    const share = shares.get(vote.hotkey)!;
    for (const job of vote.jobs) {
      if (input.activeTaskIds?.has(job.id) ?? true)
        add(job, VALIDATORS_SHARE * share * job.weight, false);
    }
  }

  const listed = [...merged.values()]
    .filter((entry) => entry.weight > 0)
    .sort((a, b) => b.weight - a.weight || compare(a.key, b.key));
  // The owner's jobs keep the owner's ids, whatever they weigh.
  const taken = new Set(listed.flatMap((entry) => entry.ownerId ?? []));
  return listed.map((entry) => {
    const id = entry.ownerId ?? uniqueId(entry, taken);
    taken.add(id);
    return { id, weight: entry.weight, params: inParamsOrder(entry.params) };
  });
}

/** Jobs with weights of 12 significant digits, heaviest first (ties by id). */
export function roundedJobs(jobs: readonly JobView[]): JobView[] {
  return jobs
    .map((job) => ({ ...job, weight: significant(job.weight) }))
    .sort((a, b) => b.weight - a.weight || compare(a.id, b.id));
}

/**
 * A voted job's id, unique in the list (jobs come heaviest first, so the heavier keeps an id two
 * share; the owner's ids are the owner's jobs'): its ids by what they contributed, else the
 * heaviest with `~2`, `~3`… (cut to the 80 characters an id may have). Network files check ids
 * for shape only, so two validators' files (or a file and the owner's) can give one id to
 * different jobs: a client keying the list by id lost one of them (an audit's finding).
 */
function uniqueId(entry: Merged, taken: ReadonlySet<string>): string {
  const candidates = [...entry.byId]
    .sort(([a, x], [b, y]) => y - x || compare(a, b))
    .map(([id]) => id);
  const free = candidates.find((id) => !taken.has(id));
  if (free !== undefined) return free;
  for (let n = 2; ; n++) {
    const suffix = `~${n}`;
    const id = `${firstCharacters(candidates[0], MAX_ID_LENGTH - suffix.length)}${suffix}`;
    if (!taken.has(id)) return id;
  }
}

/**
 * Names one aggregate: the same for every page of it, in either format and on every replica that
 * computes it from the same votes, stakes and tasks, and another once any weight or job changes.
 * A consumer paging through the list compares it across pages (offsets into a list that changed
 * between two requests skip or repeat jobs). 64 bits of SHA-256: it tells versions apart, it
 * guards nothing.
 */
export function aggregateVersion(jobs: readonly JobView[]): string {
  return createHash('sha256').update(JSON.stringify(jobs)).digest('hex').slice(0, 16);
}

/** One label of the legacy shape: what the jobs sharing it weigh together. */
export interface LegacyLabel {
  platform: Source;
  label: string;
  weight: number;
}

/**
 * The aggregate as the legacy shape counts it: one entry per platform and label, the jobs
 * sharing a label (differing in keyword or dates) added up from their unrounded weights
 * (`unroundedAggregate`), then rounded to 12 significant digits; jobs without a label cannot be
 * expressed and are left out. Heaviest first, ties by platform then label: the legacy format's
 * pages are slices of this list, so that no label is split across two pages (a client merging
 * pages into one map kept the last page's part; found by an audit).
 */
export function legacyLabels(jobs: readonly JobView[]): LegacyLabel[] {
  const merged = new Map<string, LegacyLabel>();
  for (const job of jobs) {
    if (job.params.label === null) continue;
    const key = JSON.stringify([job.params.platform, job.params.label]);
    const entry = merged.get(key);
    if (entry) entry.weight += job.weight;
    else
      merged.set(key, {
        platform: job.params.platform,
        label: job.params.label,
        weight: job.weight,
      });
  }
  return [...merged.values()]
    .map((entry) => ({ ...entry, weight: significant(entry.weight) }))
    .sort(
      (a, b) => b.weight - a.weight || compare(a.platform, b.platform) || compare(a.label, b.label),
    );
}

/** Labels (in their order) as legacy entries: one per platform, in order of its first label. */
export function toLegacyFormat(labels: readonly LegacyLabel[]): LegacyDesirability[] {
  const byPlatform = new Map<Source, [string, number][]>();
  for (const { platform, label, weight } of labels) {
    const weights = byPlatform.get(platform) ?? [];
    weights.push([label, weight]);
    byPlatform.set(platform, weights);
  }
  // Built by fromEntries, whose keys are own properties whatever they are: assigned to `{}`, a
  // network file's label `__proto__` set the object's prototype and vanished (an audit's finding).
  return [...byPlatform].map(([platform, weights]) => ({
    source_name: platform,
    label_weights: Object.fromEntries(weights),
  }));
}

/**
 * What makes two jobs one: all five params, as the subnet's reader keys them
 * (`desirability_retrieval.py` `create_job_key`, data-universe 000322e2), and as our tasks are
 * told apart (two windows on one label are two tasks).
 */
export function paramsKey(params: JobParamsView): string {
  return JSON.stringify([
    params.platform,
    params.label,
    params.keyword,
    params.post_start_datetime,
    params.post_end_datetime,
  ]);
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** 12 significant digits: no floating-point noise (0.22499999999999998) in the lists. */
function significant(weight: number): number {
  return Number(weight.toPrecision(12));
}
